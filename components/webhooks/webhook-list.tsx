"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage, fetchJson } from "../api";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Card, CardHeader } from "../ui/card";
import { Alert, Empty, Loading } from "../ui/states";
import { Time } from "../ui/time";
import { DeliveryLog } from "./delivery-log";
import { fetchWebhooks, webhookQueries, type WebhookView } from "./queries";

export function WebhookList() {
  const webhooks = useQuery({ queryKey: webhookQueries.list, queryFn: fetchWebhooks, refetchInterval: 15_000 });
  return (
    <Card aria-labelledby="webhook-list">
      <CardHeader
        title={<span id="webhook-list">Your webhooks</span>}
        description="Each one gets the events it subscribed to; open its log to see every attempt."
      />
      {webhooks.isPending ? (
        <Loading className="px-5" />
      ) : webhooks.isError ? (
        <div className="p-5">
          <Alert title="Could not load webhooks">{errorMessage(webhooks.error)}</Alert>
        </div>
      ) : webhooks.data.data.length === 0 ? (
        <Empty title="No webhooks yet">Create one with the form.</Empty>
      ) : (
        <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="webhooks">
          {webhooks.data.data.map((webhook) => (
            <WebhookItem key={webhook.id} webhook={webhook} />
          ))}
        </ul>
      )}
    </Card>
  );
}

function WebhookItem({ webhook }: { webhook: WebhookView }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () => fetchJson<void>(`/v1/webhooks/${encodeURIComponent(webhook.id)}`, { method: "DELETE" }),
    // The log of a webhook about to go stops asking for its deliveries, which would answer 404.
    onMutate: async () => {
      setOpen(false);
      await queryClient.cancelQueries({ queryKey: webhookQueries.deliveries(webhook.id) });
    },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: webhookQueries.list }),
  });
  const logId = `webhook-log-${webhook.id}`;
  return (
    <li className="px-5 py-4" data-webhook-id={webhook.id}>
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 flex-1">
          <p className="font-mono text-sm break-all text-zinc-900 dark:text-zinc-100">{webhook.url}</p>
          <p className="mt-1 flex flex-wrap gap-1.5">
            {webhook.events.map((type) => (
              <span
                key={type}
                className="rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-[11px] text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300"
              >
                {type}
              </span>
            ))}
          </p>
          <p className="mt-1 text-xs text-zinc-500 dark:text-zinc-400">
            Created <Time iso={webhook.created_at} />
          </p>
        </div>
        <Badge tone={webhook.status === "enabled" ? "success" : "danger"}>
          {webhook.status === "enabled" ? "Enabled" : "Disabled"}
        </Badge>
      </div>
      {webhook.disabled_reason && (
        <Alert tone="warning" title="Disabled" className="mt-3">
          {webhook.disabled_reason}
        </Alert>
      )}
      <div className="mt-3 flex flex-wrap gap-2">
        <Button
          size="sm"
          variant="secondary"
          aria-expanded={open}
          aria-controls={logId}
          onClick={() => setOpen((v) => !v)}
        >
          {open ? "Hide delivery log" : "Delivery log"}
        </Button>
        {confirming ? (
          <>
            <Button size="sm" variant="danger" loading={remove.isPending} onClick={() => remove.mutate()}>
              Delete for good
            </Button>
            <Button size="sm" variant="ghost" onClick={() => setConfirming(false)}>
              Keep
            </Button>
          </>
        ) : (
          <Button size="sm" variant="ghost" onClick={() => setConfirming(true)}>
            Delete
          </Button>
        )}
      </div>
      {remove.isError && (
        <Alert className="mt-3" title="Could not delete the webhook">
          {errorMessage(remove.error)}
        </Alert>
      )}
      {open && (
        <div id={logId} className="mt-3">
          <DeliveryLog webhookId={webhook.id} />
        </div>
      )}
    </li>
  );
}
