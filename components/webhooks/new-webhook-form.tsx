"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { WEBHOOK_EVENT_DESCRIPTIONS, WEBHOOK_EVENT_TYPES, type WebhookEventType } from "@/lib/webhooks/events";
import { errorMessage, fetchJson, ProblemError } from "../api";
import { Button } from "../ui/button";
import { Field } from "../ui/field";
import { Input } from "../ui/input";
import { Alert } from "../ui/states";
import { webhookQueries, type WebhookView } from "./queries";
import { SecretOnce } from "./secret-once";

type Created = WebhookView & { secret: string };

export function NewWebhookForm() {
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<WebhookEventType[]>(["job.completed", "job.failed"]);
  const create = useMutation({
    mutationFn: () => fetchJson<Created>("/v1/webhooks", { method: "POST", json: { url, events } }),
    onSuccess: () => {
      setUrl("");
      void queryClient.invalidateQueries({ queryKey: webhookQueries.list });
    },
  });
  const errors = create.error instanceof ProblemError ? create.error.fieldErrors() : {};
  const eventsError = Object.entries(errors).find(([path]) => path.startsWith("events"))?.[1];
  const formError = create.error && !errors.url && !eventsError ? errorMessage(create.error) : undefined;
  const toggle = (type: WebhookEventType, on: boolean) =>
    setEvents((list) => (on ? [...list, type] : list.filter((t) => t !== type)));

  return (
    <div className="space-y-5">
      {create.data && <SecretOnce secret={create.data.secret} url={create.data.url} onDone={() => create.reset()} />}
      <form
        noValidate
        aria-label="New webhook"
        className="space-y-5"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate();
        }}
      >
        <Field
          label="Endpoint URL"
          error={errors.url}
          hint="Dispatch POSTs each event here, signed (Standard Webhooks)."
        >
          {(control) => (
            <Input
              {...control}
              name="url"
              type="url"
              inputMode="url"
              placeholder="https://example.com/webhooks/dispatch"
              value={url}
              onChange={(event) => setUrl(event.target.value)}
            />
          )}
        </Field>
        <fieldset aria-describedby={eventsError ? "webhook-events-error" : undefined}>
          <legend className="text-sm font-medium text-zinc-800 dark:text-zinc-200">Events</legend>
          <div className="mt-2 grid gap-2 sm:grid-cols-2">
            {WEBHOOK_EVENT_TYPES.map((type) => (
              <label
                key={type}
                className="flex min-h-11 cursor-pointer items-start gap-2.5 rounded-lg border border-zinc-200 px-3 py-2 text-sm has-[:checked]:border-indigo-300 has-[:checked]:bg-indigo-50/50 has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-indigo-500 dark:border-zinc-800 dark:has-[:checked]:border-indigo-800 dark:has-[:checked]:bg-indigo-950/30"
              >
                {/* The whole row is the tap target; the box is drawn, the input is for keyboards and screen readers. */}
                <input
                  type="checkbox"
                  name="events"
                  value={type}
                  checked={events.includes(type)}
                  onChange={(event) => toggle(type, event.target.checked)}
                  className="peer sr-only"
                />
                <span
                  aria-hidden="true"
                  className="mt-0.5 flex size-4 shrink-0 items-center justify-center rounded border border-zinc-400 bg-white text-transparent peer-checked:border-indigo-600 peer-checked:text-white peer-checked:bg-indigo-600 dark:border-zinc-500 dark:bg-zinc-900 dark:peer-checked:border-indigo-500 dark:peer-checked:bg-indigo-500"
                >
                  <svg viewBox="0 0 12 12" className="size-3" fill="none" stroke="currentColor" strokeWidth="2">
                    <path d="M2.5 6.5l2.5 2.5 4.5-5" />
                  </svg>
                </span>
                <span className="min-w-0">
                  <span className="block font-mono text-xs text-zinc-900 dark:text-zinc-100">
                    <EventName type={type} />
                  </span>
                  <span className="block text-xs text-zinc-500 dark:text-zinc-400">
                    {WEBHOOK_EVENT_DESCRIPTIONS[type]}
                  </span>
                </span>
              </label>
            ))}
          </div>
          {eventsError && (
            <p id="webhook-events-error" className="mt-1.5 text-sm text-red-600 dark:text-red-400" data-field-error>
              {eventsError}
            </p>
          )}
        </fieldset>
        {formError && <Alert title="The webhook was not created">{formError}</Alert>}
        <div className="flex justify-end">
          <Button type="submit" loading={create.isPending} className="w-full sm:w-auto">
            Create webhook
          </Button>
        </div>
      </form>
    </div>
  );
}

/** An event's name, breakable after its dots and underscores: account.needs_reconnect is wider than a box of the two-column grid. */
function EventName({ type }: { type: WebhookEventType }) {
  return type.split(/(?<=[._])/).map((part, i) => (
    <Fragment key={part}>
      {i > 0 && <wbr />}
      {part}
    </Fragment>
  ));
}
