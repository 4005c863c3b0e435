"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { isSettledPublication, PUBLICATION_STATUSES } from "@/lib/reels/status";
import { errorMessage } from "../api";
import { Card, CardHeader } from "../ui/card";
import { LoadMore, StatusFilter } from "../ui/list-controls";
import { Alert, Empty, Loading } from "../ui/states";
import { Time, TimeAgo } from "../ui/time";
import { PublicationStatusBadge } from "./publication-status";
import { fetchPublications, reelKeys } from "./queries";

const fileName = (url: string) => {
  try {
    return decodeURIComponent(new URL(url).pathname.split("/").pop() || url);
  } catch {
    return url;
  }
};

export function RecentPublications() {
  const [status, setStatus] = useState("");
  const reels = useInfiniteQuery({
    queryKey: reelKeys.filtered(status),
    queryFn: ({ pageParam }) => fetchPublications(pageParam, status),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor,
    refetchInterval: (query) =>
      query.state.data?.pages.some((page) =>
        page.data.some((p) => !isSettledPublication(p.status) && p.status !== "SCHEDULED"),
      )
        ? 2000
        : 15_000,
  });
  // The server filters (an index per status): every page holds only the status asked for.
  const shown = reels.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <Card aria-labelledby="recent-publications">
      <CardHeader
        title={<span id="recent-publications">Recent publications</span>}
        actions={
          <StatusFilter
            label="Show publications with status"
            statuses={PUBLICATION_STATUSES}
            value={status}
            onChange={setStatus}
          />
        }
      />
      {reels.isPending ? (
        <Loading className="px-5" />
      ) : reels.isError ? (
        <div className="p-5">
          <Alert title="Could not load publications">{errorMessage(reels.error)}</Alert>
        </div>
      ) : shown.length === 0 ? (
        <Empty title={status ? `No ${status.toLowerCase().replace("_", " ")} publications` : "No reels yet"}>
          {status
            ? "None of your recent publications has this status; show all statuses."
            : "Publish one with the form."}
        </Empty>
      ) : (
        <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="recent-publications">
          {shown.map((p) => (
            <li key={p.publication_id} data-publication-id={p.publication_id}>
              <Link
                href={`/dashboard/reels/${p.publication_id}`}
                className="block px-5 py-3 outline-none hover:bg-zinc-50 focus-visible:bg-zinc-50 focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-inset dark:hover:bg-zinc-800/50 dark:focus-visible:bg-zinc-800/50"
              >
                <div className="flex items-center justify-between gap-3">
                  <p className="truncate text-sm font-medium text-zinc-900 dark:text-zinc-100">
                    {p.caption || (p.video_url ? fileName(p.video_url) : "Uploaded video")}
                  </p>
                  <PublicationStatusBadge status={p.status} />
                </div>
                <p className="mt-1 flex flex-wrap gap-x-3 text-xs text-zinc-600 dark:text-zinc-400">
                  {p.caption && (
                    <span className="truncate font-mono">{p.video_url ? fileName(p.video_url) : "Uploaded video"}</span>
                  )}
                  {p.status === "SCHEDULED" && p.publish_at ? (
                    <span data-testid="goes-out">
                      Goes out <Time iso={p.publish_at} />
                    </span>
                  ) : (
                    <TimeAgo iso={p.created_at} />
                  )}
                </p>
                {p.error && (
                  <p className="mt-1 text-xs break-words text-red-700 dark:text-red-300" data-testid="error-headline">
                    {p.error.headline}
                  </p>
                )}
              </Link>
            </li>
          ))}
        </ul>
      )}
      <LoadMore
        hasMore={reels.hasNextPage}
        loading={reels.isFetchingNextPage}
        onLoad={() => void reels.fetchNextPage()}
      />
    </Card>
  );
}
