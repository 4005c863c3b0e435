import Link from "next/link";

/** The dashboard's 404 inside its own frame: what was not found, why that may be, and a way back. */
export function NotFoundPanel({
  title,
  back,
  children,
}: {
  title: string;
  back: { href: string; label: string };
  children: React.ReactNode;
}) {
  return (
    <div className="flex flex-col items-center px-4 py-16 text-center" data-testid="not-found">
      <p className="font-mono text-sm text-zinc-600 dark:text-zinc-400">404</p>
      <h1 className="mt-1 text-xl font-semibold tracking-tight text-zinc-900 dark:text-white">{title}</h1>
      <p className="mt-2 max-w-sm text-sm text-zinc-600 dark:text-zinc-400">{children}</p>
      <Link
        href={back.href}
        className="mt-6 inline-flex min-h-11 items-center rounded-md text-sm font-medium text-indigo-700 outline-none hover:underline focus-visible:ring-2 focus-visible:ring-indigo-500 dark:text-indigo-300"
      >
        {back.label}
      </Link>
    </div>
  );
}
