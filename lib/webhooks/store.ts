import { randomBytes } from "node:crypto";
import { z } from "zod";
import { ApiError } from "../errors";
import { execPipeline, type Redis } from "../redis";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "./events";
import type { WebhookInput } from "./input";
import { webhookKeys } from "./keys";
import { WEBHOOK_CREATED_CHANNEL } from "./tenants-with-webhooks";

/** A webhook as stored: its hash, read and written only through this module. */
const webhookRecordSchema = z.object({
  id: z.string(),
  tenant_id: z.string(),
  url: z.string(),
  events: z.string().transform((v) => z.array(z.enum(WEBHOOK_EVENT_TYPES)).parse(JSON.parse(v))),
  secret: z.string(),
  created_at: z.string(),
  /** When the current run of failed attempts began (no success since); empty while healthy. */
  failing_since: z.string().optional(),
  disabled_at: z.string().optional(),
  disabled_reason: z.string().optional(),
});

export type WebhookRecord = z.infer<typeof webhookRecordSchema>;

/** A webhook as the API shows it: never its secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEventType[];
  created_at: string;
  status: "enabled" | "disabled";
  disabled_at: string | null;
  disabled_reason: string | null;
}

export function toWebhookView(record: WebhookRecord): WebhookView {
  return {
    id: record.id,
    url: record.url,
    events: record.events,
    created_at: record.created_at,
    status: record.disabled_at ? "disabled" : "enabled",
    disabled_at: record.disabled_at || null,
    disabled_reason: record.disabled_reason || null,
  };
}

export function parseWebhookRecord(hash: Record<string, string>): WebhookRecord | undefined {
  const parsed = webhookRecordSchema.safeParse(hash);
  return parsed.success ? parsed.data : undefined;
}

// Adds the webhook unless the tenant already has `limit`, and says so to the workers' caches.
const CREATE = `
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], unpack(cjson.decode(ARGV[2])))
redis.call('SADD', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`;

const randomId = (prefix: string) =>
  `${prefix}${randomBytes(18).toString("base64url").replace(/[-_]/g, "").slice(0, 20).padEnd(20, "0")}`;

/** Creates a webhook; its secret (Standard Webhooks: whsec_ + base64 of 32 random bytes) is returned only here. */
export async function createWebhook(
  redis: Redis,
  tenantId: string,
  input: WebhookInput,
  limit: number,
  now = new Date(),
) {
  const record = {
    id: randomId("wh_"),
    tenant_id: tenantId,
    url: input.url,
    events: JSON.stringify(input.events),
    secret: `whsec_${randomBytes(32).toString("base64")}`,
    created_at: now.toISOString(),
  };
  const added = await redis.eval(
    CREATE,
    2,
    webhookKeys.tenantWebhooks(tenantId),
    webhookKeys.webhook(record.id),
    limit,
    JSON.stringify(Object.entries(record).flat()),
    record.id,
    WEBHOOK_CREATED_CHANNEL,
    tenantId,
  );
  if (added !== 1) throw new ApiError("conflict", `A tenant has at most ${limit} webhooks. Delete one first.`);
  return { ...toWebhookView(parseWebhookRecord(record)!), secret: record.secret };
}

/** The tenant's webhook, or undefined when unknown or another tenant's. */
export async function readWebhookRecord(
  redis: Redis,
  tenantId: string,
  webhookId: string,
): Promise<WebhookRecord | undefined> {
  const record = parseWebhookRecord(await redis.hgetall(webhookKeys.webhook(webhookId)));
  return record?.tenant_id === tenantId ? record : undefined;
}

export async function readWebhookOrThrow(redis: Redis, tenantId: string, webhookId: string): Promise<WebhookRecord> {
  const record = await readWebhookRecord(redis, tenantId, webhookId);
  if (!record) throw webhookNotFound();
  return record;
}

export const webhookNotFound = () => new ApiError("not-found", "No such webhook.");

/** The tenant's webhooks, oldest first. */
export async function listWebhookRecords(redis: Redis, tenantId: string): Promise<WebhookRecord[]> {
  const ids = await redis.smembers(webhookKeys.tenantWebhooks(tenantId));
  if (ids.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hgetall(webhookKeys.webhook(id));
  const hashes = (await execPipeline(pipeline)) as Record<string, string>[];
  return hashes
    .map(parseWebhookRecord)
    .filter((r): r is WebhookRecord => r?.tenant_id === tenantId)
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}

export async function listWebhooks(redis: Redis, tenantId: string): Promise<{ data: WebhookView[] }> {
  return { data: (await listWebhookRecords(redis, tenantId)).map(toWebhookView) };
}

/** Deletes the webhook and its attempt log; its pending deliveries are dropped when they come due. */
export async function deleteWebhook(redis: Redis, tenantId: string, webhookId: string): Promise<void> {
  await readWebhookOrThrow(redis, tenantId, webhookId);
  await redis
    .multi()
    .del(webhookKeys.webhook(webhookId), webhookKeys.attempts(webhookId))
    .srem(webhookKeys.tenantWebhooks(tenantId), webhookId)
    .exec();
}
