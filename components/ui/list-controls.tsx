import { Button } from "./button";
import { Select } from "./select";

/** "All" or one status: which rows of a list to show. */
export function StatusFilter({
  label,
  statuses,
  value,
  onChange,
}: {
  label: string;
  statuses: readonly string[];
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <label className="flex items-center gap-2 text-xs text-zinc-600 dark:text-zinc-400">
      <span className="sr-only">{label}</span>
      <Select
        aria-label={label}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        className="w-40 text-xs"
      >
        <option value="">All statuses</option>
        {statuses.map((status) => (
          <option key={status} value={status}>
            {status.replace("_", " ")}
          </option>
        ))}
      </Select>
    </label>
  );
}

/** The next page of a cursor-paged list, fetched on demand. */
export function LoadMore({ hasMore, loading, onLoad }: { hasMore: boolean; loading: boolean; onLoad: () => void }) {
  if (!hasMore) return null;
  return (
    <div className="border-t border-zinc-100 px-5 py-3 text-center dark:border-zinc-800">
      <Button variant="secondary" size="sm" loading={loading} onClick={onLoad}>
        Load more
      </Button>
    </div>
  );
}
