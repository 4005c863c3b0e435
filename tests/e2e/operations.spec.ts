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

/**
 * Next.js would gzip every answer for a client that accepts gzip, 11 bytes or 100 KB alike; a small
 * API answer goes as it is (lib/web/http.ts), a large one is still compressed.
 */
test("small API answers go uncompressed, large ones gzipped, to a client that accepts gzip", async ({
  request,
  stack,
}) => {
  const gzip = { "accept-encoding": "gzip" };
  const submitted = await request.post("/v1/jobs", {
    headers: { ...gzip, authorization: `Bearer ${stack.apiKey}` },
    data: { tenant_id: stack.tenantId, model_name: "local-ngram", prompt: "Small answers", max_tokens: 4 },
  });
  expect(submitted.status()).toBe(202);
  expect(submitted.headers()["content-encoding"]).toBeUndefined();
  expect(submitted.headers()["cache-control"]).toBe("no-store, no-transform");
  expect((await submitted.json()).status).toBe("QUEUED");

  // problem+json, and OpenAI's error shape for the routes its SDKs call.
  for (const path of ["/v1/jobs", "/v1/models"]) {
    const refused = await request.get(path, { headers: gzip });
    expect(refused.status()).toBe(401);
    expect(refused.headers()["content-encoding"]).toBeUndefined();
    expect(await refused.json()).toBeTruthy();
  }

  const document = await request.get("/v1/openapi.json", { headers: gzip });
  expect(document.status()).toBe(200);
  expect(document.headers()["content-encoding"]).toBe("gzip");
  expect(document.headers()["cache-control"]).toBe("no-store");
  expect((await document.json()).openapi).toBe("3.1.1");
});
