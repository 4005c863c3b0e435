import { resumeSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import { createLog } from "@/lib/log";
import { GraphError } from "@/lib/graph/error";
import { sessionTenantOf } from "@/lib/web/auth";
import type { MalformedPathAnswer } from "@/lib/web/request-guard";
import { getServices } from "@/lib/web/services";

/**
 * Where the web process hosts the Graph sandbox: its route and its start-up sweep are the only
 * production code that reaches lib/graph/sandbox (tests/unit/import-boundaries.test.ts keeps it so).
 */

const holder = globalThis as unknown as { __dispatchSandbox?: SandboxDeps };

/**
 * The sandbox's clients: the web server's Redis, log and configuration, the clock, and the
 * dashboard's sessions (its login dialogs serve the signed-in tenant only). One object
 * per process (kept on globalThis, as Next loads a module more than once): the sandbox keys its
 * download slots by it, so a second object would be a second cap.
 */
export function getSandbox(): SandboxDeps {
  const { config, redis, log, sessions } = getServices();
  holder.__dispatchSandbox ??= {
    config,
    redis,
    log,
    now: () => Date.now(),
    sessionTenant: sessionTenantOf(sessions),
    limits: { insightsLagMs: config.SANDBOX_INSIGHTS_LAG_MS },
  };
  return holder.__dispatchSandbox;
}

/**
 * Resumes sandbox processing a previous web-server process left IN_PROGRESS. Not awaited by
 * start-up, which does not wait on Redis; a read of a stale container resumes it anyway.
 */
export function resumeSandbox(): void {
  const log = createLog("web");
  const warn = (error: unknown) => log("warn", "sandbox resume failed", { error });
  try {
    if (getServices().config.GRAPH_SANDBOX) resumeSandboxProcessing(getSandbox()).catch(warn);
  } catch (error) {
    warn(error);
  }
}

/** A request under /graph/ with a path that does not decode or a malformed Host is answered in Graph's shape (#100), as the sandbox answers the rest. */
export const GRAPH_MALFORMED_PATH: MalformedPathAnswer = {
  prefix: "/graph/",
  contentType: "application/json; charset=UTF-8",
  body: (what) => new GraphError({ code: 100, message: `(#100) ${what}` }).toBody(),
};
