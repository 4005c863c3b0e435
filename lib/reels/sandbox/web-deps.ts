import { getServices } from "../../services";
import type { SandboxDeps } from "./deps";

const holder = globalThis as unknown as { __dispatchSandboxDeps?: SandboxDeps };

/**
 * The web process's sandbox deps, made once (on globalThis, so dev-server reloads and the
 * instrumentation hook share them with the route handler and its background processing).
 */
export function getSandboxDeps(): SandboxDeps {
  if (!holder.__dispatchSandboxDeps) {
    const { config, redis, log } = getServices();
    holder.__dispatchSandboxDeps = { config, redis, log, now: () => Date.now() };
  }
  return holder.__dispatchSandboxDeps;
}

/** The sandbox answers only when GRAPH_URL points at it: with the real Graph API configured it is not an open fetcher. */
export function sandboxEnabled(): boolean {
  return getServices().config.GRAPH_SANDBOX;
}
