import autocannon from "autocannon";

export interface LoadResult {
  requests: number;
  seconds: number;
  /** Completed requests per second over the whole run. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
}

export interface LoadOptions {
  url: string;
  connections?: number;
  /** Stop after this many requests… */
  amount?: number;
  /** …or after this many seconds. */
  duration?: number;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Requests each connection cycles through (overrides method/headers/body). */
  requests?: autocannon.Request[];
}

/** One autocannon run; latencies in ms. */
export async function load(opts: LoadOptions): Promise<LoadResult> {
  // autocannon ends a run of a fixed amount on its next one-second tick, so its duration is whole
  // seconds; the rate is counted here, from the start to the last response.
  let lastResponse = 0;
  const templates: autocannon.Request[] = opts.requests ?? [
    { method: opts.method ?? "GET", headers: opts.headers, body: opts.body },
  ];
  const requests = templates.map((template): autocannon.Request => ({
    ...template,
    onResponse: (status, body, context, headers) => {
      lastResponse = performance.now();
      if (typeof template.onResponse === "function") template.onResponse(status, body, context, headers);
    },
  }));
  const started = performance.now();
  const result = await autocannon({
    url: opts.url,
    connections: opts.connections ?? 50,
    ...(opts.amount ? { amount: opts.amount } : { duration: opts.duration ?? 10 }),
    requests,
    timeout: 30,
  });
  const seconds = ((lastResponse || performance.now()) - started) / 1000;
  const count = result["1xx"] + result["2xx"] + result["3xx"] + result["4xx"] + result["5xx"];
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]),
  );
  return {
    requests: count,
    seconds,
    rps: count / seconds,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    statusCodes,
  };
}
