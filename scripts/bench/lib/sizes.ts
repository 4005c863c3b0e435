/** How big each figure of a run is: BENCH_SCALE and the BENCH_* overrides. */
export function benchSizes() {
  const scale = Number(process.env.BENCH_SCALE ?? 1);
  if (!(scale > 0)) throw new Error("BENCH_SCALE must be a positive number");
  const fanOut = process.env.BENCH_FANOUT
    ? process.env.BENCH_FANOUT.split(",")
        .map(Number)
        .filter((n) => n > 0)
    : [50, 200, 500].map((n) => Math.max(1, Math.round(n * Math.min(1, scale))));
  return {
    scale,
    backlog: Math.max(100, Math.round(10_000 * scale)),
    backlogWorkers: (process.env.BENCH_DRAIN_WORKERS ?? "1,2,4")
      .split(",")
      .map(Number)
      .filter((n) => n >= 0),
    backlogMaxTokens: 8,
    /** Drains with the usage aggregates on and off, each way (BENCH_USAGE_ROUNDS). */
    usageRounds: Math.max(1, Number(process.env.BENCH_USAGE_ROUNDS ?? 3)),
    firstTokenSamples: Math.max(5, Math.round(30 * scale)),
    fanOut,
    /** Jobs streaming at once through Kafka and one worker (the 200 and 500). */
    fanOutWorker: (process.env.BENCH_FANOUT_WORKER
      ? process.env.BENCH_FANOUT_WORKER.split(",").map(Number)
      : [200, 500]
    )
      .map((n) => Math.max(6, Math.round(n * Math.min(1, scale))))
      .filter((n) => n > 0),
    fanOutWorkerTokensPerSecond: Number(process.env.BENCH_FANOUT_WORKER_TPS ?? 20),
    fanOutSeconds: Number(process.env.BENCH_FANOUT_SECONDS ?? 5),
    fanOutTokensPerSecond: Number(process.env.BENCH_FANOUT_TPS ?? 50),
    rawSeconds: Math.max(3, Math.round(8 * Math.min(1, scale))),
    reelShortIntervalMs: 250,
    reelShortRuns: 2,
    paceJobs: Math.max(100, Math.round(1000 * Math.min(1, scale))),
    paceConcurrency: (process.env.BENCH_CONCURRENCY ?? "64,256")
      .split(",")
      .map(Number)
      .filter((n) => n > 0),
    flood: Math.max(500, Math.round(5000 * Math.min(1, scale))),
    fairnessSamples: 50,
    memoryBacklog: Math.max(10_000, Math.round(100_000 * scale)),
    memoryWindows: [1000, 10_000],
  };
}
export type Sizes = ReturnType<typeof benchSizes>;
