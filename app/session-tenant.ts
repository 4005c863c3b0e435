import { cookies } from "next/headers";
import { SESSION_COOKIE } from "@/lib/web/auth";
import { getServices } from "@/lib/web/services";

/** The tenant of the dashboard's session (checked in Redis: a revoked one is signed out); undefined when signed out. */
export async function sessionTenant(): Promise<string | undefined> {
  const value = (await cookies()).get(SESSION_COOKIE)?.value;
  return value ? getServices().sessions.tenantFor(value) : undefined;
}
