import type { Metadata } from "next";
import Link from "next/link";
import { Logo } from "@/components/logo";

export const metadata: Metadata = { title: "Not found" };

/** Any path the app has no page for: Dispatch's look (light and dark) and a way back, not Next's bare default. */
export default function NotFound() {
  return (
    <main className="flex min-h-screen flex-col items-center justify-center px-4 py-12 text-center">
      <Logo className="size-10" />
      <p className="mt-6 font-mono text-sm text-zinc-600 dark:text-zinc-400">404</p>
      <h1 className="mt-1 text-xl font-semibold tracking-tight">This page does not exist</h1>
      <p className="mt-2 max-w-sm text-sm text-zinc-600 dark:text-zinc-400">
        The address may be mistyped, or the page may have moved.
      </p>
      <Link
        href="/dashboard/jobs"
        className="mt-6 rounded-md text-sm font-medium text-indigo-700 outline-none hover:underline focus-visible:ring-2 focus-visible:ring-indigo-500 dark:text-indigo-300"
      >
        Go to the dashboard
      </Link>
    </main>
  );
}
