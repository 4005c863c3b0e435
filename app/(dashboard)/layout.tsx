import Link from "next/link";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { Logo } from "@/components/logo";
import { NavLinks } from "@/components/nav-links";
import { SignOutButton } from "@/components/auth/sign-out-button";
import { REQUESTED_PATH_HEADER, safeNext } from "../safe-next";
import { sessionTenant } from "../session-tenant";

export default async function DashboardLayout({ children }: { children: React.ReactNode }) {
  const tenant = await sessionTenant();
  if (!tenant) {
    // Back to the page that was asked for (a shared job or reel link) once signed in.
    const next = safeNext((await headers()).get(REQUESTED_PATH_HEADER), "");
    redirect(next ? `/sign-in?next=${encodeURIComponent(next)}` : "/sign-in");
  }
  return (
    <div className="min-h-screen">
      <header className="sticky top-0 z-20 border-b border-zinc-200 bg-white/85 backdrop-blur dark:border-zinc-800 dark:bg-zinc-950/85">
        <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-6 px-4 sm:px-6">
          <Link
            href="/dashboard/jobs"
            className="flex h-14 items-center gap-2.5 rounded-md font-semibold tracking-tight outline-none focus-visible:ring-2 focus-visible:ring-indigo-500"
          >
            <Logo />
            Dispatch
          </Link>
          <NavLinks className="order-last -mx-4 w-[calc(100%+2rem)] px-4 sm:order-none sm:mx-0 sm:w-auto sm:px-0" />
          <div className="ml-auto flex items-center gap-3">
            <span className="hidden text-sm text-zinc-600 sm:inline dark:text-zinc-400">Tenant</span>
            <span
              className="max-w-40 truncate rounded-md bg-zinc-100 px-2 py-1 font-mono text-xs text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300"
              data-testid="tenant"
              title={tenant}
            >
              {tenant}
            </span>
            <SignOutButton />
          </div>
        </div>
      </header>
      <main className="mx-auto max-w-6xl px-4 py-6 sm:px-6 sm:py-8">{children}</main>
    </div>
  );
}
