"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { PublicationView } from "@/lib/reels/publication";
import { errorMessage, fetchJson } from "../api";
import { Button } from "../ui/button";
import { reelKeys } from "./queries";

/** Tries a FAILED or TIMED_OUT publication again with a new container (POST /v1/reels/{id}/retry). */
export function RetryPublicationButton({ publicationId }: { publicationId: string }) {
  const queryClient = useQueryClient();
  const retry = useMutation({
    mutationFn: () =>
      fetchJson<PublicationView>(`/v1/reels/${encodeURIComponent(publicationId)}/retry`, { method: "POST" }),
    onSuccess: (publication) => {
      queryClient.setQueryData(reelKeys.one(publicationId), publication);
      void queryClient.invalidateQueries({ queryKey: reelKeys.list });
    },
  });
  return (
    <div className="mt-3">
      <Button size="sm" variant="secondary" loading={retry.isPending} onClick={() => retry.mutate()}>
        Retry
      </Button>
      {retry.isError && <p className="mt-2 text-red-700 dark:text-red-300">{errorMessage(retry.error)}</p>}
    </div>
  );
}
