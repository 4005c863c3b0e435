import { timingSafeEqual } from "node:crypto";
import type { Admin } from "kafkajs";
import { ApiError } from "./errors";
import { getMetrics, METRICS_CONTENT_TYPE } from "./metrics";
import { readConsumerLag } from "./consumer-lag";
import { withTimeout } from "./with-timeout";
import { fromAnotherSite, fromThisMachine, type RequestSite } from "./net/this-machine";

/** GET /metrics as the web server (app/metrics) and a worker's operations server (lib/worker/metrics-server.ts) both answer it. */

/**
 * Who may read /metrics: with METRICS_TOKEN, whoever sends it as a bearer token; without it, a
 * client on this machine only (a loopback peer, and loopback every address a proxy forwarded for:
 * Next itself adds the peer to X-Forwarded-For), so a default deployment never shows its tenants'
 * names and volumes to the network. Never to a browser's cross-site request (lib/net/this-machine.ts).
 */
export function assertMetricsAccess(
  request: { authorization: string | null; peer: string | undefined; forwardedFor: string | null; site: RequestSite },
  token: string | undefined,
): void {
  // A page of another site open in a browser here is on this machine too.
  if (fromAnotherSite(request.site))
    throw new ApiError("forbidden", "GET /metrics answers no request a page of another site sent.");
  if (token) {
    const sent = /^Bearer\s+(.+)$/i.exec(request.authorization ?? "")?.[1]?.trim() ?? "";
    const a = Buffer.from(sent);
    const b = Buffer.from(token);
    if (a.length === b.length && timingSafeEqual(a, b)) return;
    throw new ApiError("unauthorized", "GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`.");
  }
  if (fromThisMachine(request.peer, request.forwardedFor)) return;
  throw new ApiError(
    "forbidden",
    "GET /metrics answers this machine only; set METRICS_TOKEN to scrape it from elsewhere.",
  );
}

/**
 * Sets the consumer-lag gauge from the broker (log-end minus committed offset of each watched
 * group's partitions), as the System page reads it. A broker that does not answer in time leaves
 * the last values: a scrape never fails for it.
 */
export async function collectConsumerLag(admin: () => Promise<Admin>): Promise<void> {
  const gauge = getMetrics().consumerLag;
  try {
    const { groups } = await withTimeout(admin().then(readConsumerLag), 2000, "consumer lag");
    for (const { group, topic, partitions } of groups)
      for (const p of partitions) gauge.set({ group, topic, partition: String(p.partition) }, p.lag);
  } catch {
    // The readiness probe reports the broker; the gauges keep their last values.
  }
}

/** The registry in Prometheus text format. */
export async function metricsResponse(): Promise<Response> {
  return new Response(await getMetrics().registry.metrics(), {
    headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" },
  });
}
