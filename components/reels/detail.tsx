/** One labelled fact of a publication's details card (inside a <dl>). */
export function Detail({ label, value }: { label: string; value: React.ReactNode }) {
  return (
    <div className="grid grid-cols-[7.5rem_minmax(0,1fr)] gap-3">
      <dt className="text-zinc-600 dark:text-zinc-400">{label}</dt>
      <dd className="break-words text-zinc-800 dark:text-zinc-200">{value}</dd>
    </div>
  );
}
