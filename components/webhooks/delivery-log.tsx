"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { errorMessage, fetchJson } from "../api";
import { Badge, type Tone } from "../ui/badge";
import { Button } from "../ui/button";
import { Alert, Empty, Loading } from "../ui/states";
import { Time, TimeAgo } from "../ui/time";
import { fetchDeliveries, webhookQueries, type AttemptRecord } from "./queries";

function outcome(attempt: AttemptRecord): { tone: Tone; label: string } {
  if (attempt.delivered_at) return { tone: "success", label: "Delivered" };
  if (attempt.next_attempt_at) return { tone: "warning", label: "Retrying" };
  return { tone: "danger", label: "Failed" };
}

/** Every attempt of the webhook's deliveries, newest first, refreshed while open; each delivery can be sent again. */
export function DeliveryLog({ webhookId }: { webhookId: string }) {
  const queryClient = useQueryClient();
  const attempts = useQuery({
    queryKey: webhookQueries.deliveries(webhookId),
    queryFn: () => fetchDeliveries(webhookId),
    refetchInterval: 3000,
  });
  const resend = useMutation({
    mutationFn: (deliveryId: string) =>
      fetchJson(`/v1/webhooks/${encodeURIComponent(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/resend`, {
        method: "POST",
      }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: webhookQueries.deliveries(webhookId) }),
  });
  if (attempts.isPending) return <Loading label="Loading deliveries…" />;
  if (attempts.isError) return <Alert title="Could not load the delivery log">{errorMessage(attempts.error)}</Alert>;
  if (attempts.data.data.length === 0)
    return (
      <Empty title="No deliveries yet" className="rounded-lg border border-dashed border-zinc-200 dark:border-zinc-800">
        They appear here as events happen.
      </Empty>
    );
  return (
    <div className="space-y-2">
      {resend.isError && <Alert title="Could not resend">{errorMessage(resend.error)}</Alert>}
      <ol
        className="divide-y divide-zinc-100 rounded-lg border border-zinc-200 dark:divide-zinc-800 dark:border-zinc-800"
        aria-label="Delivery log"
        data-testid="delivery-log"
      >
        {attempts.data.data.map((attempt) => {
          const { tone, label } = outcome(attempt);
          return (
            <li
              key={`${attempt.id}-${attempt.attempt}-${attempt.attempted_at}`}
              data-delivery-id={attempt.id}
              className="flex flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2.5 text-sm"
            >
              <Badge tone={tone}>{label}</Badge>
              <span className="font-mono text-xs text-zinc-900 dark:text-zinc-100">{attempt.event_type}</span>
              <span className="text-xs text-zinc-500 dark:text-zinc-400">attempt {attempt.attempt}</span>
              <span className="font-mono text-xs text-zinc-700 dark:text-zinc-300">
                {attempt.status_code ?? "no answer"}
              </span>
              <TimeAgo iso={attempt.attempted_at} className="text-xs text-zinc-500 dark:text-zinc-400" />
              {attempt.next_attempt_at && (
                <span className="text-xs text-zinc-500 dark:text-zinc-400">
                  next try <Time iso={attempt.next_attempt_at} />
                </span>
              )}
              <Button
                size="sm"
                variant="ghost"
                className="ml-auto"
                loading={resend.isPending && resend.variables === attempt.id}
                onClick={() => resend.mutate(attempt.id)}
              >
                Resend
              </Button>
              {attempt.error && <p className="w-full text-xs text-red-600 dark:text-red-400">{attempt.error}</p>}
            </li>
          );
        })}
      </ol>
      <p className="text-xs text-zinc-500 dark:text-zinc-400">Attempts are kept 7 days.</p>
    </div>
  );
}
