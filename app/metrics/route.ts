import { PEER_HEADER } from "@/lib/web/auth";
import { otherMethods, withProblems } from "@/lib/web/http";
import { assertMetricsAccess, collectConsumerLag, metricsResponse } from "@/lib/metrics-endpoint";
import { getServices } from "@/lib/web/services";

export const dynamic = "force-dynamic";

/** Prometheus text format; METRICS_TOKEN as a bearer token, or from this machine only. */
export const GET = withProblems(async (request: Request) => {
  const services = getServices();
  const { headers } = request;
  assertMetricsAccess(
    {
      authorization: headers.get("authorization"),
      peer: headers.get(PEER_HEADER) ?? undefined,
      forwardedFor: headers.get("x-forwarded-for"),
      site: { fetchSite: headers.get("sec-fetch-site"), origin: headers.get("origin"), host: headers.get("host") },
    },
    services.config.METRICS_TOKEN,
  );
  await collectConsumerLag(services.admin);
  return metricsResponse();
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
