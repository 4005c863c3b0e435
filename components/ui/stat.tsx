import { cx } from "./cx";

/** A labelled number, e.g. TTFT or tokens/s. */
export function Stat({
  label,
  value,
  hint,
  className,
  ...props
}: { label: string; value: React.ReactNode; hint?: string; className?: string } & React.ComponentProps<"div">) {
  return (
    <div className={cx("min-w-0", className)} {...props}>
      <dt className="text-xs font-medium text-zinc-500 dark:text-zinc-400">{label}</dt>
      <dd className="mt-1 truncate text-lg font-semibold text-zinc-900 tabular-nums dark:text-zinc-100" title={hint}>
        {value}
      </dd>
    </div>
  );
}
