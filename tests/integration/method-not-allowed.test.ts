import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * A method a route does not have answers 405 in the API's error shape with an Allow header naming
 * the ones it has, and OPTIONS names the same (Next alone would send an empty 405, and list every
 * exported method). Calls the route modules as Next does.
 */

type Route = Record<string, unknown>;
const call = (route: Route, method: string) =>
  (route[method] as (request: Request) => Response | Promise<Response>)(
    new Request("http://dispatch.test/x", { method }),
  );

describe("unsupported methods", () => {
  it.each<[string, string, string, () => Promise<Route>]>([
    ["/api/reels", "DELETE", "GET, HEAD, POST, OPTIONS", () => import("@/app/api/reels/route")],
    ["/api/reels/{id}", "PUT", "GET, HEAD, PATCH, DELETE, OPTIONS", () => import("@/app/api/reels/[id]/route")],
    ["/api/reels/{id}/resume", "GET", "POST, OPTIONS", () => import("@/app/api/reels/[id]/resume/route")],
    ["/api/accounts", "PATCH", "GET, HEAD, POST, OPTIONS", () => import("@/app/api/accounts/route")],
    ["/api/accounts/{account_id}", "GET", "DELETE, OPTIONS", () => import("@/app/api/accounts/[account_id]/route")],
    ["/api/reels/{id}/retry", "GET", "POST, OPTIONS", () => import("@/app/api/reels/[id]/retry/route")],
    ["/v1/jobs", "PATCH", "GET, HEAD, POST, OPTIONS", () => import("@/app/v1/jobs/route")],
    ["/v1/jobs/{id}/cancel", "DELETE", "POST, OPTIONS", () => import("@/app/v1/jobs/[id]/cancel/route")],
    ["/api/session", "PUT", "GET, HEAD, POST, DELETE, OPTIONS", () => import("@/app/api/session/route")],
  ])("%s answers %s with 405 problem+json", async (_path, method, allow, load) => {
    const route = await load();
    const response = await call(route, method);
    expect(response.status).toBe(405);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(response.headers.get("allow")).toBe(allow);
    expect(await response.json()).toEqual({
      type: "/problems/method-not-allowed",
      title: "Method Not Allowed",
      status: 405,
      detail: `This endpoint answers ${allow}.`,
    });
    const options = await call(route, "OPTIONS");
    expect([options.status, options.headers.get("allow")]).toEqual([204, allow]);
  });

  it("every route module has a handler for every method", async () => {
    const files = readdirSync("app", { recursive: true, encoding: "utf8" })
      .filter((file) => path.basename(file) === "route.ts" && !file.startsWith("graph/"))
      .map((file) => path.join("app", file));
    expect(files.length).toBeGreaterThan(15);
    for (const file of files) {
      const route = (await import(/* @vite-ignore */ path.resolve(file))) as Route;
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
        expect([file, method, typeof route[method]]).toEqual([file, method, "function"]);
    }
  });
});
