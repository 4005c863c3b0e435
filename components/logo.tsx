import { cx } from "./ui/cx";

export function Logo({ className }: { className?: string }) {
  return (
    <svg className={cx("size-7", className)} viewBox="0 0 32 32" aria-hidden="true">
      <rect width="32" height="32" rx="8" className="fill-zinc-900 dark:fill-white" />
      <path
        d="M7.5 10.5h7a5.5 5.5 0 0 1 0 11h-7z"
        fill="none"
        strokeWidth="2.5"
        strokeLinejoin="round"
        className="stroke-white dark:stroke-zinc-900"
      />
      <circle cx="24.5" cy="16" r="2" className="fill-indigo-400 dark:fill-indigo-500" />
    </svg>
  );
}
