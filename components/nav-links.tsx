"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { cx } from "./ui/cx";

const LINKS = [
  { href: "/dashboard/jobs", label: "Jobs" },
  { href: "/dashboard/reels", label: "Reels" },
  { href: "/dashboard/usage", label: "Usage" },
  { href: "/dashboard/accounts", label: "Accounts" },
  { href: "/dashboard/system", label: "System" },
  { href: "/dashboard/webhooks", label: "Webhooks" },
  { href: "/dashboard/api", label: "API" },
];

export function NavLinks({ className }: { className?: string }) {
  const pathname = usePathname();
  return (
    // Seven sections do not fit a phone's width: the row scrolls sideways by itself, the page does not.
    <nav
      aria-label="Main"
      className={cx(
        "flex gap-0 overflow-x-auto border-t border-zinc-100 sm:gap-1 sm:border-0 dark:border-zinc-800",
        className,
      )}
    >
      {LINKS.map(({ href, label }) => {
        const active = pathname === href || pathname.startsWith(`${href}/`);
        return (
          <Link
            key={href}
            href={href}
            aria-current={active ? "page" : undefined}
            className={cx(
              "relative flex h-11 shrink-0 items-center whitespace-nowrap px-2.5 text-sm font-medium outline-none focus-visible:ring-2 focus-visible:ring-indigo-500 sm:h-14 sm:px-3",
              active
                ? "text-zinc-900 dark:text-white"
                : "text-zinc-500 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-white",
            )}
          >
            {label}
            {active && (
              <span className="absolute inset-x-3 bottom-0 h-0.5 rounded-full bg-indigo-500" aria-hidden="true" />
            )}
          </Link>
        );
      })}
    </nav>
  );
}
