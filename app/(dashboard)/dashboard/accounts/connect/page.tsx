import type { Metadata } from "next";
import { LoginOutcome } from "@/components/accounts/login-outcome";
import { readLoginOutcome } from "@/lib/accounts/meta-login/login-outcome-redirect";
import { getServices } from "@/lib/web/services";
import { sessionLoginCaller } from "./session-login-caller";

export const metadata: Metadata = { title: "Connect an account" };
export const dynamic = "force-dynamic";

/** Where a login through Meta that connected nothing ends: its message, kept server-side under `?outcome`. */
export default async function LoginOutcomePage({ searchParams }: { searchParams: Promise<{ outcome?: unknown }> }) {
  const refusal = await readLoginOutcome(getServices().redis, (await searchParams).outcome, await sessionLoginCaller());
  return <LoginOutcome title={refusal.title} detail={refusal.detail} />;
}
