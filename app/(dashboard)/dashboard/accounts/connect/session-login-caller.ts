import { cookies } from "next/headers";
import { loginCallerFor } from "@/lib/accounts/meta-login/login-caller";
import type { LoginCaller } from "@/lib/accounts/meta-login/login-callback";
import { SESSION_COOKIE } from "@/lib/web/auth";
import { sessionTenant } from "../../../../session-tenant";

/** The session as Meta's login routes bound their records to it: its tenant and its cookie. */
export async function sessionLoginCaller(): Promise<LoginCaller | undefined> {
  const [tenant, cookie] = await Promise.all([sessionTenant(), cookies()]);
  const value = cookie.get(SESSION_COOKIE)?.value;
  return tenant && value ? loginCallerFor(tenant, value) : undefined;
}
