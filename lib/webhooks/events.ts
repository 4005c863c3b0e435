/**
 * The webhook event types and the limits of a webhook, declared once: the routes, the worker, the
 * dashboard and the tests import them. Dependency-free, so client components can import it.
 */
export const WEBHOOK_EVENT_TYPES = [
  "job.completed",
  "job.failed",
  "job.cancelled",
  "reel.published",
  "reel.failed",
  "reel.needs_attention",
  "account.needs_reconnect",
  "account.expiring",
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What each event means, for the dashboard's checkboxes and the README. */
export const WEBHOOK_EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  "job.completed": "A generation job finished",
  "job.failed": "A generation job failed",
  "job.cancelled": "A generation job was cancelled",
  "reel.published": "A reel was published",
  "reel.failed": "A reel could not be published",
  "reel.needs_attention":
    "A reel's container never finished processing in its 24 h life (TIMED_OUT), or the reel waits for its account to be reconnected",
  "account.needs_reconnect": "Graph refused an account's token: it must be connected again",
  "account.expiring": "An account's token expires within 7 days and could not be refreshed: reconnect it",
};

export const MAX_WEBHOOK_URL_CHARS = 2048;

/** Delivery states: waiting for its next attempt, delivered (a 2xx), or given up. */
export const DELIVERY_STATES = ["pending", "delivered", "failed"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];
