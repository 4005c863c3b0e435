import type { AttemptRecord } from "@/lib/webhooks/attempt-delivery";
import type { WebhookView } from "@/lib/webhooks/store";
import { fetchJson } from "../api";

export type { AttemptRecord, WebhookView };

/** TanStack Query keys and fetchers of the webhooks API, shared by the webhooks components (Redis keys are lib/webhooks/keys.ts). */
export const webhookQueries = {
  list: ["webhooks"] as const,
  deliveries: (id: string) => ["webhooks", id, "deliveries"] as const,
};

export const fetchWebhooks = () => fetchJson<{ data: WebhookView[] }>("/v1/webhooks");
export const fetchDeliveries = (id: string) =>
  fetchJson<{ data: AttemptRecord[] }>(`/v1/webhooks/${encodeURIComponent(id)}/deliveries?limit=50`);
