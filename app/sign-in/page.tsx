import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/auth/sign-in-form";
import { Logo } from "@/components/logo";
import { Alert } from "@/components/ui/states";
import { SIGNED_OUT_OUTCOME_PATH } from "@/lib/accounts/meta-login/login-outcome-redirect";
import { safeNext } from "../safe-next";
import { sessionTenant } from "../session-tenant";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string | string[] }> }) {
  const next = safeNext((await searchParams).next);
  if (await sessionTenant()) redirect(next);
  return (
    <main className="flex min-h-screen flex-col items-center justify-center px-4 py-12">
      <div className="w-full max-w-sm">
        <div className="mb-8 flex flex-col items-center text-center">
          <Logo className="size-10" />
          <h1 className="mt-4 text-xl font-semibold tracking-tight">Sign in to Dispatch</h1>
          <p className="mt-1 text-sm text-zinc-500 dark:text-zinc-400">
            Use your API key. It is checked once and not stored in the browser.
          </p>
        </div>
        {next === SIGNED_OUT_OUTCOME_PATH && (
          <Alert tone="warning" title="Nothing was connected" className="mb-6">
            You came back from Instagram or Facebook signed out of Dispatch. Sign in, then connect the account again.
          </Alert>
        )}
        <div className="rounded-xl border border-zinc-200 bg-white p-6 shadow-xs dark:border-zinc-800 dark:bg-zinc-900">
          <SignInForm next={next} />
        </div>
        <p className="mt-6 text-center text-xs text-zinc-500 dark:text-zinc-400">
          Running locally? <code className="font-mono">npm start</code> prints a key for tenant{" "}
          <code className="font-mono">demo</code>.
        </p>
      </div>
    </main>
  );
}
