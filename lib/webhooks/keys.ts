/** Redis key names of webhooks and their deliveries, in one place. */
export const webhookKeys = {
  /** The webhook's record (a hash; its secret too, never returned after creation). */
  webhook: (webhookId: string) => `webhook:${webhookId}`,
  /** The tenant's webhook ids (a set). */
  tenantWebhooks: (tenantId: string) => `webhooks:tenant:${tenantId}`,
  /** One delivery (a message to one webhook): its body, attempt count and state. */
  delivery: (deliveryId: string) => `webhook:delivery:${deliveryId}`,
  /** The webhook's attempts, newest first, capped (a list of JSON records). */
  attempts: (webhookId: string) => `webhook:attempts:${webhookId}`,
  /** Every pending delivery by the time it is due, or by when its current attempt's lease ends. */
  due: "webhooks:due",
};

/** Deliveries and attempt logs are kept this long after their last change. */
export const DELIVERY_TTL_S = 7 * 86400;
/** A webhook's attempt log keeps at most this many entries. */
export const MAX_ATTEMPTS_KEPT = 500;
