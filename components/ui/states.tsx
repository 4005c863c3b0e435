import { cx } from "./cx";
import { Spinner } from "./spinner";

/** Loading, empty and error states, so every list and panel says what is going on. */

export function Loading({ label = "Loading…", className }: { label?: string; className?: string }) {
  return (
    <div
      role="status"
      className={cx("flex items-center gap-2 py-6 text-sm text-zinc-500 dark:text-zinc-400", className)}
    >
      <Spinner />
      {label}
    </div>
  );
}

export function Empty({
  title,
  children,
  className,
}: {
  title: string;
  children?: React.ReactNode;
  className?: string;
}) {
  return (
    <div className={cx("py-8 text-center", className)}>
      <p className="text-sm font-medium text-zinc-700 dark:text-zinc-300">{title}</p>
      {children && <p className="mt-1 text-sm text-zinc-500 dark:text-zinc-400">{children}</p>}
    </div>
  );
}

export function Alert({
  tone = "danger",
  title,
  children,
  className,
}: {
  tone?: "danger" | "warning" | "info";
  title?: string;
  children?: React.ReactNode;
  className?: string;
}) {
  const tones = {
    danger: "border-red-200 bg-red-50 text-red-800 dark:border-red-900 dark:bg-red-950/50 dark:text-red-200",
    warning:
      "border-amber-200 bg-amber-50 text-amber-900 dark:border-amber-900 dark:bg-amber-950/50 dark:text-amber-200",
    info: "border-blue-200 bg-blue-50 text-blue-900 dark:border-blue-900 dark:bg-blue-950/50 dark:text-blue-200",
  };
  return (
    <div
      role={tone === "danger" ? "alert" : "status"}
      className={cx("rounded-lg border px-4 py-3 text-sm", tones[tone], className)}
    >
      {title && <p className="font-medium">{title}</p>}
      {children && <div className={cx(title && "mt-1", "opacity-90")}>{children}</div>}
    </div>
  );
}
