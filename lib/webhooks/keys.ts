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
  /** A tenant's pending deliveries by the time each is due, or by when its current attempt's lease ends. */
  due: (tenantId: string) => `webhooks:due:${tenantId}`,
  /** Tenants with pending deliveries, each by the earliest score in its `due` set: where a claim looks. */
  dueTenants: "webhooks:due-tenants",
  /** A tenant's attempts under way (cluster-wide), by when each one's lease ends: its cap on attempts in flight. */
  inFlight: (tenantId: string) => `webhooks:in-flight:${tenantId}`,
  /** The one queue of every tenant's deliveries before they were queued per tenant; claims empty it into those. */
  legacyDue: "webhooks:due",
};

/** Attempts one tenant may have under way at once across the workers, so its slow endpoints cannot hold every slot. */
export const TENANT_ATTEMPTS_IN_FLIGHT = 4;
/** Deliveries one tenant may have pending; events past it are not queued (its attempt log says so). */
export const MAX_PENDING_PER_TENANT = 10_000;

/**
 * Lua: after a change to a tenant's due set, its entry in dueTenants takes the set's earliest
 * score, or goes when the set is empty. Takes the Lua expressions naming the two keys and the tenant.
 */
export const syncDueTenant = (due: string, dueTenants: string, tenant: string) => `
local first = redis.call('ZRANGE', ${due}, 0, 0, 'WITHSCORES')
if first[2] then redis.call('ZADD', ${dueTenants}, first[2], ${tenant}) else redis.call('ZREM', ${dueTenants}, ${tenant}) end`;

/** Deliveries and attempt logs are kept this long after their last change. */
export const DELIVERY_TTL_S = 7 * 86400;
/** A webhook's attempt log keeps at most this many entries. */
export const MAX_ATTEMPTS_KEPT = 500;
