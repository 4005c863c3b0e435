import type { Config } from "../config";
import type { Redis } from "../redis";
import { configuredGraphHosts, type GraphHosts } from "../graph/hosts";
import { createGraphPacer, type GraphPacer } from "../graph/pacing";
import { ConnectedAccounts } from "../accounts/connected-accounts";
import { loadAccountsKey } from "../accounts/token-cipher";
import { createUploadUrls, type UploadUrls } from "../reels/upload-for-graph";

/**
 * The worker's composition root, as lib/web/services.ts is the web server's: what more than one
 * consumer or schedule needs, built once per worker process from its configuration and Redis, and
 * handed to each of them on the context (`ctx.services`). worker/index.ts and the tests'
 * in-process worker (tests/helpers.ts) both build it here, so the two cannot drift.
 *
 * Clients a single part owns and closes as it stops (the webhook worker's subscriber and delivery
 * agent, the generation consumer's cancel subscriber, the publication consumer's preflight) stay
 * with that part.
 */
export interface WorkerServices {
  /** The tenants' connected publishing accounts, tokens sealed at rest; REEL_ACCOUNTS seeded once per process. */
  accounts: ConnectedAccounts;
  /** The one Graph pacer (its state is in Redis): the hosts' clients and the token refresh both report to it. */
  pacer: GraphPacer;
  /** Graph per host (GRAPH_URL, or an account's own), all paced by `pacer`. */
  graphs: GraphHosts;
  /** The signed addresses under PUBLIC_URL Graph fetches uploads from (Instagram Login accounts). */
  uploadUrls: UploadUrls;
}

export function createWorkerServices(config: Config, redis: Redis): WorkerServices {
  const accountsKey = loadAccountsKey(config);
  const pacer = createGraphPacer(redis, { spacingMs: config.GRAPH_PACE_SPACING_MS });
  return {
    accounts: new ConnectedAccounts(redis, accountsKey, config.REEL_ACCOUNTS),
    pacer,
    graphs: configuredGraphHosts(config, pacer),
    uploadUrls: createUploadUrls(config, accountsKey, redis),
  };
}
