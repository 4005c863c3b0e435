"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { errorMessage } from "../api";
import { formatAgo } from "../format";
import { Card, CardHeader } from "../ui/card";
import { Alert, Empty, Loading } from "../ui/states";
import { PublicationStatusBadge } from "./publication-status";
import { isSettledPublication } from "@/lib/reels/status";
import { fetchPublications, reelKeys } from "./queries";

const fileName = (url: string) => {
  try {
    return decodeURIComponent(new URL(url).pathname.split("/").pop() || url);
  } catch {
    return url;
  }
};

export function RecentPublications() {
  const reels = useQuery({
    queryKey: reelKeys.list,
    queryFn: fetchPublications,
    refetchInterval: (query) => (query.state.data?.data.some((p) => !isSettledPublication(p.status) && p.status !== "SCHEDULED") ? 2000 : 15_000),
  });
  return (
    <Card aria-labelledby="recent-publications">
      <CardHeader title={<span id="recent-publications">Recent publications</span>} />
      {reels.isPending ? (
        <Loading className="px-5" />
      ) : reels.isError ? (
        <div className="p-5">
          <Alert title="Could not load publications">{errorMessage(reels.error)}</Alert>
        </div>
      ) : reels.data.data.length === 0 ? (
        <Empty title="No reels yet">Publish one with the form.</Empty>
      ) : (
        <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="recent-publications">
          {reels.data.data.map((p) => (
            <li key={p.publication_id}>
              <Link
                href={`/dashboard/reels/${p.publication_id}`}
                className="block px-5 py-3 outline-none hover:bg-zinc-50 focus-visible:bg-zinc-50 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-inset dark:hover:bg-zinc-800/50 dark:focus-visible:bg-zinc-800/50"
              >
                <div className="flex items-center justify-between gap-3">
                  <p className="truncate text-sm font-medium text-zinc-900 dark:text-zinc-100">{p.caption || (p.video_url ? fileName(p.video_url) : "Uploaded video")}</p>
                  <PublicationStatusBadge status={p.status} />
                </div>
                <p className="mt-1 flex flex-wrap gap-x-3 text-xs text-zinc-500 dark:text-zinc-400">
                  {p.caption && <span className="truncate font-mono">{(p.video_url ? fileName(p.video_url) : "Uploaded video")}</span>}
                  <span>{formatAgo(p.created_at)}</span>
                  {p.error?.code != null && <span className="text-red-600 dark:text-red-400">Graph {p.error.code}{p.error.subcode ? `/${p.error.subcode}` : ""}</span>}
                </p>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
