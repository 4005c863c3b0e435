import { isIP } from "node:net";
import { z } from "zod";
import { ApiError } from "../errors";
import { isPublicAddress } from "../net/public-address";
import { MAX_WEBHOOK_URL_CHARS, WEBHOOK_EVENT_TYPES } from "./events";

/**
 * POST /v1/webhooks. The address is checked again, by the delivering connection itself, on every
 * attempt (lib/net/public-agent.ts); refusing an obviously private one here only tells the client
 * at once instead of in the delivery log.
 */
export function webhookInputSchema({ allowPrivate }: { allowPrivate: boolean }) {
  return z.strictObject({
    url: z
      .string()
      .trim()
      .max(MAX_WEBHOOK_URL_CHARS, `The URL is longer than ${MAX_WEBHOOK_URL_CHARS} characters`)
      .pipe(z.url({ protocol: /^https?$/, message: "The URL must be an http:// or https:// address" }))
      .refine(
        (url) => !URL.parse(url)?.username && !URL.parse(url)?.password,
        "The URL must not carry a user name or password",
      )
      .refine(
        (url) => allowPrivate || !isPrivateHost(URL.parse(url)?.hostname ?? ""),
        "The URL must reach a public address, not this machine or a private network",
      ),
    events: z
      .array(z.enum(WEBHOOK_EVENT_TYPES, { message: `Each event is one of ${WEBHOOK_EVENT_TYPES.join(", ")}` }))
      .min(1, "Choose at least one event")
      .max(WEBHOOK_EVENT_TYPES.length)
      .transform((events) => WEBHOOK_EVENT_TYPES.filter((type) => events.includes(type))),
  });
}

export type WebhookInput = z.infer<ReturnType<typeof webhookInputSchema>>;

function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return isIP(host) !== 0 && !isPublicAddress(host);
}

/** Ids in paths: ours look like wh_… and msg_…; anything else is simply not found. */
export const webhookIdSchema = z.string().regex(/^wh_[A-Za-z0-9]{16,40}$/);
export const deliveryIdSchema = z.string().regex(/^msg_[A-Za-z0-9]{16,40}$/);

/** A path's webhook id; one that cannot be ours is simply not found. */
export function parseWebhookId(value: string): string {
  const parsed = webhookIdSchema.safeParse(value);
  if (!parsed.success) throw new ApiError("not-found", "No such webhook.");
  return parsed.data;
}

export function parseDeliveryId(value: string): string {
  const parsed = deliveryIdSchema.safeParse(value);
  if (!parsed.success) throw new ApiError("not-found", "No such delivery (deliveries are kept 7 days).");
  return parsed.data;
}
