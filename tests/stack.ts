import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { startStack, type Stack } from "../scripts/lib/stack";
import { freePort } from "../scripts/lib/redis-server";
import { ROOT } from "./helpers";

export interface TestStack extends Stack {
  logFile: string;
  logs(): string;
  keys: Record<string, string>;
  fetchAs(tenant: string, pathname: string, init?: RequestInit): Promise<Response>;
}

/** The whole of Dispatch as separate processes, as `npm start` runs it, on free ports and a fresh data dir. */
export async function startTestStack(
  name: string,
  env: Record<string, string> = {},
  tenants = ["acme", "globex"],
): Promise<TestStack> {
  const dataDir = path.join(ROOT, ".test-data/stacks", name);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const keys = Object.fromEntries(tenants.map((t) => [t, `${t}_${randomBytes(18).toString("base64url")}`]));
  const logFile = path.join(dataDir, "stack.log");
  const stack = await startStack({
    root: ROOT,
    dataDir,
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(await freePort()),
      // Not the default 9464, which another stack or test run on this machine may hold.
      METRICS_PORT: String(await freePort()),
      API_KEYS: Object.entries(keys)
        .map(([t, k]) => `${t}:${k}`)
        .join(","),
      ...env,
    },
    output: { file: logFile },
  });
  return {
    ...stack,
    logFile,
    async stop() {
      await stack.stop();
      stack.assertNoUncaught();
    },
    keys,
    logs: () => readFileSync(logFile, "utf8"),
    fetchAs: (tenant, pathname, init = {}) =>
      fetch(`${stack.url}${pathname}`, {
        ...init,
        headers: {
          authorization: `Bearer ${keys[tenant]}`,
          ...(init.body ? { "content-type": "application/json" } : {}),
          ...(init.headers ?? {}),
        },
      }),
  };
}

export async function submitJob(stack: TestStack, tenant: string, body: Record<string, unknown>): Promise<Response> {
  return stack.fetchAs(tenant, "/v1/jobs", {
    method: "POST",
    body: JSON.stringify({ tenant_id: tenant, model_name: "local-ngram", temperature: 0, ...body }),
  });
}
