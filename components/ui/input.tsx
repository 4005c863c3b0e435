import { cx } from "./cx";

/** The look every text control shares; red when aria-invalid. */
export const controlClass = cx(
  "block w-full rounded-lg border border-zinc-300 bg-white px-3 text-sm text-zinc-900 shadow-xs placeholder:text-zinc-500",
  "outline-none transition-colors focus:border-indigo-500 focus:ring-3 focus:ring-indigo-500/20",
  "aria-[invalid=true]:border-red-500 aria-[invalid=true]:focus:ring-red-500/20 disabled:cursor-not-allowed disabled:bg-zinc-50",
  "dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100 dark:placeholder:text-zinc-400 dark:disabled:bg-zinc-800",
);

export function Input({ className, ...props }: React.ComponentProps<"input">) {
  return <input className={cx(controlClass, "h-11 sm:h-10", className)} {...props} />;
}
