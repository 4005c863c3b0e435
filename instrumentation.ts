/**
 * Next.js start-up hook: guards every request before Next sees it (lib/web/request-guard.ts), and
 * resumes sandbox processing that a previous web-server process left IN_PROGRESS (app/graph/sandbox-host.ts),
 * and warns when GRAPH_VERSION ends soon.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  await startWebTracing();
  const { guardRequests } = await import("./lib/web/request-guard");
  const { servedHostNames } = await import("./lib/net/served-hosts");
  const { getConfig, ConfigError } = await import("./lib/config");
  const { GRAPH_MALFORMED_PATH, resumeSandbox } = await import("./app/graph/sandbox-host");
  guardRequests({
    answers: [GRAPH_MALFORMED_PATH],
    servedHosts: () => {
      try {
        return servedHostNames(getConfig());
      } catch (error) {
        // A configuration that does not parse is every route's to report, named; no Host is refused meanwhile.
        if (error instanceof ConfigError) return undefined;
        throw error;
      }
    },
  });
  resumeSandbox();
  await warnAboutWebGraphVersion();
}

/** The start-up warning when GRAPH_VERSION ends soon (lib/graph/versions.ts); a bad configuration is reported by the first request instead. */
async function warnAboutWebGraphVersion(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { getConfig, ConfigError } = await import("./lib/config");
  const { createLog } = await import("./lib/log");
  const { warnAboutGraphVersion } = await import("./lib/graph/versions");
  try {
    warnAboutGraphVersion(getConfig().GRAPH_VERSION, createLog("web"));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
  }
}

/** Traces, only when OTEL_EXPORTER_OTLP_ENDPOINT is set (lib/tracing.ts); Next then traces each request too. */
async function startWebTracing(): Promise<void> {
  // The runtime check again, so the Edge build drops this function's imports as it does register's.
  if (process.env.NEXT_RUNTIME !== "nodejs" || !process.env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  const { getConfig } = await import("./lib/config");
  const { startTracing } = await import("./lib/tracing");
  await startTracing({ serviceName: "dispatch-web", otlpEndpoint: getConfig().OTEL_EXPORTER_OTLP_ENDPOINT });
}
