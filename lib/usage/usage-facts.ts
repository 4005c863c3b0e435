import type { JobAuditEvent } from "../jobs/audit-event";
import type { JobRecord } from "../jobs/job-record";
import { isFinalJob, type FinalJobStatus } from "../jobs/status";
import type { PublicationRecord } from "../reels/publication-record";
import { bucketOf } from "./histogram";
import { bucketStart, BUCKET_MS, RETENTION_MS, USAGE_BUCKETS, usageKeys, type UsageKind } from "./usage-keys";

/** What a finished job adds to its tenant's usage, read from its record or from its audit event. */
export interface JobFacts {
  tenantId: string;
  model: string;
  status: FinalJobStatus;
  /** When it became final (ms): the bucket it counts in. */
  at: number;
  inputTokens: number;
  outputTokens: number;
  /** USD; null when the model has no price. */
  cost: number | null;
  ttftMs: number | null;
  tokensPerSecond: number | null;
}

export const REEL_OUTCOMES = ["PUBLISHED", "FAILED", "CANCELLED"] as const;
export type ReelOutcome = (typeof REEL_OUTCOMES)[number];
export const isReelOutcome = (status: string): status is ReelOutcome =>
  (REEL_OUTCOMES as readonly string[]).includes(status);

/** What a publication's arrival at a final status adds. */
export interface ReelFacts {
  tenantId: string;
  accountId: string;
  status: ReelOutcome;
  at: number;
  /** From when it was due (submitted, or its publish_at if later) to live; null unless PUBLISHED. */
  submitToLiveMs: number | null;
}

/** One hash's increments: field → amount, and when the hash expires (unix seconds). */
export interface Tally {
  key: string;
  expireAt: number;
  fields: [field: string, by: number][];
}

/** A hash field of the aggregates: its kind and its dimensions, as a JSON array so no name can break it. */
export const usageField = (...parts: string[]): string => JSON.stringify(parts);

/** Nano-dollars: integer counters add exactly, and a job's cost (10 decimals) loses at most half of one. */
export const NANO_USD = 1e9;

export function jobFactsFromRecord(record: JobRecord & { status: FinalJobStatus }, now: number): JobFacts {
  return {
    tenantId: record.tenant_id,
    model: record.model_name,
    status: record.status,
    at: Date.parse(record.completed_at ?? "") || now,
    inputTokens: record.usage?.prompt_tokens ?? 0,
    outputTokens: record.usage?.completion_tokens ?? 0,
    cost: record.cost?.amount ?? null,
    ttftMs: record.ttft_ms ?? null,
    tokensPerSecond: record.tokens_per_second ?? null,
  };
}

export function jobFactsFromAudit(event: JobAuditEvent): JobFacts | undefined {
  const at = Date.parse(event.completed_at ?? "");
  if (!isFinalJob(event.status) || Number.isNaN(at)) return undefined;
  return {
    tenantId: event.tenant_id,
    model: event.model_name,
    status: event.status,
    at,
    inputTokens: event.usage?.prompt_tokens ?? 0,
    outputTokens: event.usage?.completion_tokens ?? 0,
    cost: event.cost?.amount ?? null,
    ttftMs: event.timing.ttft_ms,
    tokensPerSecond: event.timing.tokens_per_second,
  };
}

export function reelFactsFromRecord(record: PublicationRecord): ReelFacts | undefined {
  const at = Date.parse(record.updated_at);
  if (!isReelOutcome(record.status) || Number.isNaN(at)) return undefined;
  const due = Math.max(Date.parse(record.created_at) || at, Date.parse(record.publish_at) || 0);
  return {
    tenantId: record.tenant_id,
    accountId: record.account_id,
    status: record.status,
    at,
    submitToLiveMs: record.status === "PUBLISHED" ? Math.max(0, at - due) : null,
  };
}

export function jobTallies(facts: JobFacts, now: number): Tally[] {
  const { model, status } = facts;
  const fields: [string, number][] = [
    [usageField("jobs", model, status), 1],
    [usageField("in", model, status), facts.inputTokens],
    [usageField("out", model, status), facts.outputTokens],
    [usageField("cost", model, status), facts.cost === null ? 0 : Math.round(facts.cost * NANO_USD)],
  ];
  if (facts.ttftMs !== null) fields.push([usageField("ttft", model, String(bucketOf(facts.ttftMs))), 1]);
  if (facts.tokensPerSecond !== null)
    fields.push([usageField("tps", model, String(bucketOf(facts.tokensPerSecond))), 1]);
  return talliesFor("jobs", facts.tenantId, facts.at, fields, now);
}

export function reelTallies(facts: ReelFacts, now: number): Tally[] {
  const fields: [string, number][] = [[usageField("reels", facts.accountId, facts.status), 1]];
  if (facts.submitToLiveMs !== null)
    fields.push([usageField("live", facts.accountId, String(bucketOf(facts.submitToLiveMs))), 1]);
  return talliesFor("reels", facts.tenantId, facts.at, fields, now);
}

/** The same increments in the hour's and the day's hash; a zero adds nothing, and a bucket past its keeping is left out. */
function talliesFor(kind: UsageKind, tenantId: string, at: number, fields: [string, number][], now: number): Tally[] {
  const nonZero = fields.filter(([, by]) => by !== 0);
  return USAGE_BUCKETS.flatMap((bucket) => {
    const start = bucketStart(at, bucket);
    const expireAt = start + BUCKET_MS[bucket] + RETENTION_MS[bucket];
    if (expireAt <= now) return [];
    return [
      { key: usageKeys.bucket(kind, tenantId, bucket, start), expireAt: Math.ceil(expireAt / 1000), fields: nonZero },
    ];
  });
}
