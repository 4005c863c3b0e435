import type { Redis } from "../redis";
import { abortableSleep } from "../sleep";
import { GraphPaused, type GraphError } from "./error";
import { isRateLimitCode, type GraphUsage } from "./usage";

/**
 * Pacing Graph calls as Meta advises: every answer's usage headers (X-App-Usage for the app,
 * X-Business-Use-Case-Usage per account) are kept in Redis, shared by the web server and every
 * worker. Above SLOW_ABOVE_PERCENT of any figure, calls for that app or account are spaced out
 * (a tenth of `spacingMs` apart at 80 %, growing to all of it near 100 %); at 100 %, or while
 * Graph names an estimated_time_to_regain_access, they do not go out at all until the time has
 * passed (the client throws GraphPaused; the publish flow waits, SCHEDULED rate_limited). A
 * rate-limit refusal (4, 17, 32, 613, 80002) blocks its scope the same way.
 *
 * Keys: graph:pace:app and graph:pace:account:{id}, hashes of `percent` (the last reading),
 * `until` (no calls before, ms) and `next` (the next free slot, ms). A reading lives
 * READING_TTL_MS after its answer, a block until it ends: usage is a rolling figure, and every
 * answer brings a fresh one.
 */

export const SLOW_ABOVE_PERCENT = 80;
/** A reading is this old at most before it is forgotten (every answer refreshes it). */
export const READING_TTL_MS = 5 * 60_000;
export const DEFAULT_PACE = { spacingMs: 10_000, blockMs: 60_000 };

export type PaceDecision = { holdMs: number } | { pausedUntil: number; scope: "app" | "account" };

export interface GraphPacer {
  /** Before a call (for an account, or null): go now, go after `holdMs`, or do not go before `pausedUntil`. */
  before(accountId: string | null): Promise<PaceDecision>;
  /** After an answer: its usage headers (undefined: none came) and, for a rate-limit refusal, its code. */
  after(accountId: string | null, usage: GraphUsage | undefined, refusal?: { rateLimitCode: number }): Promise<void>;
}

export const paceKeys = {
  app: "graph:pace:app",
  account: (accountId: string) => `graph:pace:account:${accountId}`,
};

// KEYS: the scopes (app, then the account if any). ARGV: now, spacingMs, slow-above percent.
// A scope blocked past now pauses the call; otherwise each scope above the threshold hands out its
// next slot, spacing-ms apart, and the call holds until the latest of them.
const BEFORE = `
local now = tonumber(ARGV[1])
local blocked, scope = 0, 0
for i, key in ipairs(KEYS) do
  local untilv = tonumber(redis.call('HGET', key, 'until') or '0') or 0
  if untilv > now and untilv > blocked then blocked, scope = untilv, i end
end
if blocked > 0 then return {'paused', tostring(blocked), scope} end
local spacing, threshold, hold = tonumber(ARGV[2]), tonumber(ARGV[3]), 0
for _, key in ipairs(KEYS) do
  local reading = redis.call('HMGET', key, 'percent', 'next')
  local percent = tonumber(reading[1] or '0') or 0
  if percent >= threshold then
    local share = math.min(1, math.max(0.1, (percent - threshold) / (100 - threshold)))
    local slot = math.max(now, tonumber(reading[2] or '0') or 0)
    redis.call('HSET', key, 'next', tostring(slot + math.floor(spacing * share)))
    hold = math.max(hold, slot - now)
  end
end
return {'go', tostring(hold), 0}`;

// KEYS[1]: a scope. ARGV: now, percent, until (0: not blocked; the reading replaces an older block), ttl-ms.
const RECORD = `
redis.call('HSET', KEYS[1], 'percent', ARGV[2], 'until', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

// A refusal blocks the scope until ARGV[1] (ms) unless a longer block is already there; the key lives at least ARGV[2] ms.
const BLOCK = `
local untilv = tonumber(redis.call('HGET', KEYS[1], 'until') or '0') or 0
if untilv >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'until', ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

export interface PaceOptions {
  /** The gap between calls of a scope near 100 % (GRAPH_PACE_SPACING_MS). */
  spacingMs?: number;
  /** How long a scope at 100 % waits when Graph names no time to regain access. */
  blockMs?: number;
  now?: () => number;
}

export function createGraphPacer(redis: Redis, options: PaceOptions = {}): GraphPacer {
  const spacingMs = options.spacingMs ?? DEFAULT_PACE.spacingMs;
  const blockMs = options.blockMs ?? DEFAULT_PACE.blockMs;
  const now = options.now ?? Date.now;

  const record = (key: string, percent: number, regainAccessMs: number, at: number) => {
    const until = regainAccessMs > 0 ? at + regainAccessMs : percent >= 100 ? at + blockMs : 0;
    return redis.eval(RECORD, 1, key, at, percent, until, Math.max(READING_TTL_MS, until - at));
  };

  return {
    async before(accountId) {
      const keys = accountId ? [paceKeys.app, paceKeys.account(accountId)] : [paceKeys.app];
      const [kind, value, scope] = (await redis.eval(
        BEFORE,
        keys.length,
        ...keys,
        now(),
        spacingMs,
        SLOW_ABOVE_PERCENT,
      )) as [string, string, number];
      if (kind === "paused") return { pausedUntil: Number(value), scope: scope === 1 ? "app" : "account" };
      return { holdMs: Number(value) };
    },

    async after(accountId, usage, refusal) {
      const at = now();
      const writes: Promise<unknown>[] = [];
      if (usage?.app) writes.push(record(paceKeys.app, usage.app.percent, 0, at));
      const shares = Object.entries(usage?.accounts ?? {});
      for (const [id, share] of shares)
        writes.push(record(paceKeys.account(id), share.percent, share.regainAccessMs, at));
      // The header names the Instagram account (or its Page); the account that called counts it too.
      if (accountId && shares.length > 0 && !usage?.accounts[accountId]) {
        writes.push(
          record(
            paceKeys.account(accountId),
            Math.max(...shares.map(([, s]) => s.percent)),
            Math.max(...shares.map(([, s]) => s.regainAccessMs)),
            at,
          ),
        );
      }
      await Promise.all(writes);
      // Code 4 is the app's limit; the others (17, 32, 613, 80002) the account's. A call made for
      // none of Dispatch's accounts (a login's, for a user or a Page) blocks nothing for them: its
      // usage headers, recorded above, name whose budget it was.
      const key =
        refusal?.rateLimitCode === 4 ? paceKeys.app : refusal && accountId ? paceKeys.account(accountId) : undefined;
      if (key) {
        const wait = Math.max(usage?.regainAccessMs ?? 0, blockMs);
        await redis.eval(BLOCK, 1, key, at + wait, wait);
      }
    },
  };
}

/** Before a call: holds it while the pacer spaces the scope's calls out, or refuses it (GraphPaused) while the app or the account waits to regain access. */
export async function waitForPace(pacer: GraphPacer, accountId: string | null, signal?: AbortSignal): Promise<void> {
  const decision = await pacer.before(accountId);
  if ("pausedUntil" in decision) throw new GraphPaused(decision.pausedUntil, decision.scope);
  if (decision.holdMs > 0) await abortableSleep(decision.holdMs, signal ?? new AbortController().signal);
}

/** After an answer: its usage headers and, when Graph refused the call for a rate limit, that refusal's code. */
export async function reportToPacer(
  pacer: GraphPacer,
  accountId: string | null,
  usage: GraphUsage | undefined,
  graphError: GraphError | undefined,
): Promise<void> {
  const refusal =
    graphError && isRateLimitCode(graphError.code, graphError.subcode) ? { rateLimitCode: graphError.code } : undefined;
  // Pacing is advice: a Redis hiccup must not fail a call Graph answered.
  await pacer.after(accountId, usage, refusal).catch(() => {});
}

/** Whether the account's calls are held back now (its own budget or the app's), and until when; what the account view shows. */
export async function readPace(
  redis: Redis,
  accountId: string,
  now: number,
): Promise<{ pausedUntil: number | null; percent: number }> {
  const [app, account] = await Promise.all([
    redis.hmget(paceKeys.app, "percent", "until"),
    redis.hmget(paceKeys.account(accountId), "percent", "until"),
  ]);
  const until = Math.max(Number(app[1] ?? 0) || 0, Number(account[1] ?? 0) || 0);
  const percent = Math.max(Number(app[0] ?? 0) || 0, Number(account[0] ?? 0) || 0);
  return { pausedUntil: until > now ? until : null, percent };
}
