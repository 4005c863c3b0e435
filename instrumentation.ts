/**
 * Next.js start-up hook: guards every request before Next sees it (lib/web/request-guard.ts), and
 * resumes sandbox processing that a previous web-server process left IN_PROGRESS (app/graph/sandbox-host.ts).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  await startWebTracing();
  const { guardRequests } = await import("./lib/web/request-guard");
  const { GRAPH_MALFORMED_PATH, resumeSandbox } = await import("./app/graph/sandbox-host");
  guardRequests([GRAPH_MALFORMED_PATH]);
  resumeSandbox();
}

/** Traces, only when OTEL_EXPORTER_OTLP_ENDPOINT is set (lib/tracing.ts); Next then traces each request too. */
async function startWebTracing(): Promise<void> {
  // The runtime check again, so the Edge build drops this function's imports as it does register's.
  if (process.env.NEXT_RUNTIME !== "nodejs" || !process.env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  const { getConfig } = await import("./lib/config");
  const { startTracing } = await import("./lib/tracing");
  await startTracing({ serviceName: "dispatch-web", otlpEndpoint: getConfig().OTEL_EXPORTER_OTLP_ENDPOINT });
}
