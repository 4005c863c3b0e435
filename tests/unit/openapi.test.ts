import { readdirSync } from "node:fs";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { GET } from "@/app/v1/openapi.json/route";
import { buildOpenApiDocument } from "@/lib/openapi/document";
import { ROOT } from "../helpers";

/** Route files that are not public API, and why. */
const NOT_PUBLIC: Record<string, string> = {
  "app/api/bench/floor/route.ts": "exists only in a server the benchmark starts (BENCH_FLOOR_ROUTE)",
};
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Every route.ts under app/v1, app/jobs and app/api, with its OpenAPI path; catch-all 404 routes left out. */
function routeFiles(): { file: string; path: string }[] {
  const found: { file: string; path: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name === "route.ts" && !rel.includes("[...") && !(rel in NOT_PUBLIC)) {
        const segments = rel
          .split("/")
          .slice(1, -1)
          .map((s) => s.replace(/^\[(\w+)\]$/, "{$1}"));
        found.push({ file: rel, path: `/${segments.join("/")}` });
      }
    }
  };
  for (const dir of ["app/v1", "app/jobs", "app/api"]) walk(dir);
  return found;
}

/**
 * Whether a route's export is one of otherMethods' 405 answers (no operation of the API): those
 * take no arguments and answer at once without touching anything, so calling them is safe.
 */
async function answers405(handler: unknown): Promise<boolean> {
  const fn = handler as (...args: unknown[]) => Response | Promise<Response>;
  if (fn.length !== 0) return false;
  const response = await fn(new Request("http://dispatch.test/"), undefined);
  return response.status === 405;
}

describe("the OpenAPI document", () => {
  const document = buildOpenApiDocument();

  it("is a valid OpenAPI 3.1 document whose references all resolve", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(() => validator.resolveRefs()).not.toThrow();
  });

  it("has every exported method of every route file under app/v1, app/jobs and app/api", async () => {
    const files = routeFiles();
    expect(files.length).toBeGreaterThan(15);
    const missing: string[] = [];
    for (const { file, path: route } of files) {
      const exported = (await import(path.join(ROOT, file))) as Record<string, unknown>;
      const methods = [];
      for (const m of METHODS)
        if (typeof exported[m] === "function" && !(await answers405(exported[m]))) methods.push(m);
      expect(methods.length, file).toBeGreaterThan(0);
      for (const method of methods) {
        const operation = (
          document.paths[route] as Record<string, { responses: Record<string, unknown> }> | undefined
        )?.[method.toLowerCase()];
        if (!operation) missing.push(`${method} ${route} (${file})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("documents no operation that has no route", async () => {
    const routes = new Map(routeFiles().map((r) => [r.path, r.file]));
    const stale: string[] = [];
    for (const [route, operations] of Object.entries(document.paths)) {
      if (route === "/metrics") continue; // app/metrics, outside the API folders
      const file = routes.get(route);
      const exported = file ? ((await import(path.join(ROOT, file))) as Record<string, unknown>) : {};
      for (const method of Object.keys(operations)) {
        const handler = exported[method.toUpperCase()];
        if (typeof handler !== "function" || (await answers405(handler)))
          stale.push(`${method.toUpperCase()} ${route}`);
      }
    }
    expect(stale).toEqual([]);
  });

  it("lists reels, accounts and uploads under /v1, and their /api paths as deprecated twins", () => {
    type Operations = Record<string, { deprecated?: boolean; operationId: string; description?: string }>;
    const paths = document.paths as Record<string, Operations>;
    const formerlyApi = Object.keys(paths).filter((p) => /^\/v1\/(reels|accounts|uploads)(\/|$)/.test(p));
    expect(formerlyApi.length).toBeGreaterThanOrEqual(10);
    for (const v1 of formerlyApi) {
      const api = paths[v1.replace(/^\/v1/, "/api")];
      expect(Object.keys(api ?? {}), v1).toEqual(Object.keys(paths[v1]));
      for (const [method, operation] of Object.entries(paths[v1])) {
        expect(operation.deprecated, `${method} ${v1}`).toBeUndefined();
        expect(api[method].deprecated, `${method} ${v1} at /api`).toBe(true);
        expect(api[method].description).toMatch(new RegExp(`^Deprecated: use \`${method.toUpperCase()} ${v1}\``));
        expect(api[method].operationId).not.toBe(operation.operationId);
      }
    }
    // Meta's redirect URIs point at the login routes: those stay /api only, and are not deprecated.
    const connect = Object.keys(paths).filter((p) => p.includes("/accounts/connect/"));
    expect(connect.length).toBeGreaterThan(0);
    for (const p of connect) {
      expect(p.startsWith("/api/"), p).toBe(true);
      for (const operation of Object.values(paths[p])) expect(operation.deprecated, p).toBeUndefined();
    }
    const created = paths["/v1/reels"].post as unknown as { responses: Record<string, { description: string }> };
    expect(created.responses["202"].description).toContain("`Location: /v1/reels/{id}`");
    const old = paths["/api/reels"].post as unknown as { responses: Record<string, { description: string }> };
    expect(old.responses["202"].description).toContain("`Location: /api/reels/{id}`");
  });

  it("describes errors as problem+json and the streams as text/event-stream", () => {
    const submit = document.paths["/v1/jobs"].post as {
      responses: Record<string, { content: Record<string, unknown> }>;
    };
    expect(Object.keys(submit.responses["422"].content)).toEqual(["application/problem+json"]);
    const stream = document.paths["/v1/jobs/{id}/stream"].get as {
      responses: Record<string, { content: Record<string, unknown> }>;
    };
    expect(Object.keys(stream.responses["200"].content)).toEqual(["text/event-stream"]);
    // The request schema is the one the route validates with: strict, with its limits.
    expect(document.components.schemas.JobCommand).toMatchObject({
      additionalProperties: false,
      required: ["tenant_id", "model_name", "prompt"],
    });
  });

  it("is served at GET /v1/openapi.json, with this deployment's prompt limit", async () => {
    Object.assign(process.env, {
      REDIS_URL: "redis://127.0.0.1:1",
      KAFKA_BROKERS: "127.0.0.1:1",
      API_KEYS: "acme:acme-key-0123456789abcdef",
      MAX_PROMPT_CHARS: "1000",
    });
    const response = await GET(new Request("http://dispatch.test/v1/openapi.json"), undefined);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const served = await response.json();
    expect(served.components.schemas.JobCommand.properties.prompt.maxLength).toBe(1000);
    expect(served).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument({ maxPromptChars: 1000 }))));
  });
});
