import { expect, submitJob, signIn, test } from "./fixtures";

/** The operator's endpoints on the running web server, as a scraper or a load balancer on this machine sees them. */
test("health, /metrics and the OpenAPI document answer on the running server", async ({ page, request }) => {
  expect((await request.get("/api/health/live")).status()).toBe(200);
  const ready = await request.get("/api/health/ready");
  expect(ready.status()).toBe(200);
  expect(await ready.json()).toEqual({ status: "ready" });

  await signIn(page);
  await submitJob(page, { prompt: "Counted once", max_tokens: 8 });
  // No METRICS_TOKEN in this stack: this machine may read /metrics (Next's own X-Forwarded-For included).
  const metrics = await request.get("/metrics");
  expect(metrics.status()).toBe(200);
  expect(metrics.headers()["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
  expect(await metrics.text()).toMatch(
    /^dispatch_jobs_submitted_total\{model="local-ngram",tenant="[^"]+"\} [1-9]\d*$/m,
  );

  const document = await request.get("/v1/openapi.json");
  expect(document.status()).toBe(200);
  expect((await document.json()).openapi).toBe("3.1.1");
  const bundle = await request.get("/reference/scalar.js");
  expect(bundle.status()).toBe(200);
  expect(bundle.headers()["content-type"]).toBe("text/javascript; charset=utf-8");
});
