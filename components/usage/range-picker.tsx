import Link from "next/link";
import { USAGE_RANGES, type PickedRange } from "@/lib/usage/usage-range";
import { Button, focusRing } from "../ui/button";
import { cx } from "../ui/cx";
import { Input } from "../ui/input";

/** The last 24 h, 7 d or 30 d, or two dates: links and a plain form, so the page is drawn on the server for each. */
export function RangePicker({ range }: { range: PickedRange }) {
  return (
    <div className="flex flex-wrap items-end gap-3">
      <nav aria-label="Range" className="flex rounded-lg border border-zinc-300 p-0.5 dark:border-zinc-700">
        {Object.entries(USAGE_RANGES).map(([key, { label }]) => (
          <Link
            key={key}
            href={`/dashboard/usage?range=${key}`}
            aria-current={range.key === key ? "page" : undefined}
            className={cx(
              "flex h-11 items-center rounded-md px-3 text-sm font-medium sm:h-8",
              focusRing,
              range.key === key
                ? "bg-zinc-900 text-white dark:bg-white dark:text-zinc-900"
                : "text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800",
            )}
          >
            {label}
          </Link>
        ))}
      </nav>
      <form action="/dashboard/usage" method="get" className="flex flex-wrap items-end gap-2" aria-label="Custom range">
        <label className="text-xs font-medium text-zinc-600 dark:text-zinc-400">
          From
          <Input type="date" name="from" defaultValue={range.from} required className="mt-1 w-40" />
        </label>
        <label className="text-xs font-medium text-zinc-600 dark:text-zinc-400">
          To
          <Input type="date" name="to" defaultValue={range.to} required className="mt-1 w-40" />
        </label>
        <Button type="submit" variant="secondary">
          Show
        </Button>
      </form>
    </div>
  );
}
