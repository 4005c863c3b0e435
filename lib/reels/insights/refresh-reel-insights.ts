import type { ConnectedAccounts } from "../../accounts/connected-accounts";
import type { Redis } from "../../redis";
import { GraphError, GraphPaused, isGraphFailure } from "../../graph/error";
import type { GraphHosts } from "../../graph/hosts";
import { claimReading, readInsightsRecord, writeReading, type InsightsRecord } from "./insights-store";
import { REEL_INSIGHT_METRICS } from "../../graph/insights-metrics";
import { readingDue, type RefreshPolicy } from "./refresh-policy";

/** What reading a reel's insights from Graph takes: the clients, the accounts' tokens and the clock. */
export interface InsightsDeps {
  redis: Redis;
  /** Each account's Graph host, paced by the usage headers (lib/graph/pacing.ts) like every other call. */
  graphs: GraphHosts;
  connected: ConnectedAccounts;
  now: () => number;
}

/** Codes 10 and 200–299: the token lacks a permission, here the insights one. */
export function isMissingPermission(error: GraphError): boolean {
  return error.code === 10 || (error.code >= 200 && error.code <= 299);
}

/** An account connected before Dispatch asked for the insights permission, or whose person unticked it: only a new connection helps. */
const NO_PERMISSION =
  "Reconnect the account to allow insights: its token lacks the insights permission (instagram_business_manage_insights with Instagram Login, instagram_manage_insights with Facebook Login); connect it again and allow insights.";

/**
 * Asks Graph for the reel's insights if `policy` says a reading is due and no one else took it
 * meanwhile, and records the outcome; the record as it stands afterwards. An empty answer is
 * `pending` (Graph's figures lag up to 48 h), never zeros; a failure keeps the earlier values.
 */
export async function refreshReelInsights(
  deps: InsightsDeps,
  record: InsightsRecord,
  policy: RefreshPolicy,
  signal?: AbortSignal,
): Promise<InsightsRecord> {
  const now = deps.now();
  if (!readingDue(record, now, policy) || !(await claimReading(deps.redis, record, now))) return record;
  await writeReading(deps.redis, record.media_id, await askGraph(deps, record, signal));
  return (await readInsightsRecord(deps.redis, record.media_id)) ?? record;
}

type Reading = Parameters<typeof writeReading>[2];

async function askGraph(deps: InsightsDeps, record: InsightsRecord, signal?: AbortSignal): Promise<Reading> {
  const connected = await deps.connected.find(record.tenant_id, record.account_id);
  const graph = connected ? deps.graphs.forAccount(connected) : undefined;
  if (!connected?.accessToken || connected.status === "needs_reconnect" || !graph)
    return { status: "failed", message: "The account is not connected, or must be connected again, to read insights." };
  const account = { accountId: connected.accountId, accessToken: connected.accessToken };
  try {
    const values = await graph.readMediaInsights(account, record.media_id, REEL_INSIGHT_METRICS, signal);
    if (values === null) return { status: "pending", message: "" };
    return { status: "available", values, fetchedAt: deps.now(), message: "" };
  } catch (error) {
    if (!isGraphFailure(error)) throw error;
    if (error instanceof GraphError && isMissingPermission(error))
      return { status: "no-permission", message: NO_PERMISSION };
    if (error instanceof GraphPaused)
      return {
        status: "failed",
        message: `Graph's usage limit holds calls until ${new Date(error.until).toISOString()}; the figures are read again after that.`,
      };
    return { status: "failed", message: `Graph did not give the insights: ${error.message}` };
  }
}
