import { readFileSync } from "node:fs";
import path from "node:path";
import { parseConfig } from "../../../lib/config";
import { probeVideo } from "../../../lib/video/probe-video";
import { getJson, postJson, startWorkers, type BenchContext } from "../lib/context";
import { median, sleep } from "../lib/stats";

export interface ReelFlowResult {
  sandboxProcessingMs: number;
  configuredProcessingMs: number;
  /** probeVideo on the file in this process: the parsing work itself. */
  probeMs: number;
  flows: ReelFlowRun[];
}

export interface ReelFlowRun {
  pollIntervalMs: number;
  /** POST /api/reels → the publication reads PUBLISHED. */
  totalMs: number;
  polls: number;
  /** What is not the configured waits: total − polls × interval. */
  overheadMs: number;
  status: string;
}

const SAMPLE = "samples/reel-valid.mp4";

/**
 * Figure 5: the sandbox's processing time for the sample reel (its Graph API driven directly),
 * then the whole flow (POST /api/reels → PUBLISHED, with a worker polling the sandbox) at the
 * default and a short poll interval, and what it costs beyond the waits it is configured to make.
 */
export async function measureReelFlow(ctx: BenchContext, shortIntervalMs: number, shortRuns: number): Promise<ReelFlowResult> {
  const config = parseConfig(ctx.stack.env);
  const videoUrl = `${ctx.url}/${SAMPLE}`;

  const p0 = performance.now();
  await probeVideo(new Uint8Array(readFileSync(path.join(ctx.root, "public", SAMPLE))));
  const probeMs = performance.now() - p0;

  const processing: number[] = [];
  for (let i = 0; i < 2; i++) processing.push(await sandboxProcessing(ctx, config.GRAPH_VERSION, videoUrl));
  ctx.log(`sandbox processing ${processing.map(Math.round).join(", ")} ms (configured at least ${config.SANDBOX_PROCESSING_MS})`);

  const flows: ReelFlowRun[] = [];
  for (const [interval, runs] of [
    [config.REEL_POLL_INTERVAL_MS, 1],
    [shortIntervalMs, shortRuns],
  ] as const) {
    const set = startWorkers(ctx, 1, { REEL_POLL_INTERVAL_MS: String(interval) }, ["generation", "reels"]);
    try {
      await set.ready;
      for (let i = 0; i < runs; i++) flows.push(await publishOnce(ctx, videoUrl, interval));
    } finally {
      await set.stop();
    }
  }
  return { sandboxProcessingMs: median(processing), configuredProcessingMs: config.SANDBOX_PROCESSING_MS, probeMs, flows };
}

async function sandboxProcessing(ctx: BenchContext, version: string, videoUrl: string): Promise<number> {
  const { id: account, token } = ctx.reelAccount;
  const form = new URLSearchParams({ media_type: "REELS", video_url: videoUrl, caption: "bench", access_token: token });
  const t0 = performance.now();
  const created = await fetch(`${ctx.url}/graph/${version}/${account}/media`, { method: "POST", body: form });
  const { id } = (await created.json()) as { id?: string };
  if (!id) throw new Error(`the sandbox did not create a container: ${created.status}`);
  for (;;) {
    const read = await fetch(`${ctx.url}/graph/${version}/${id}?fields=status_code,status&access_token=${encodeURIComponent(token)}`);
    const { status_code } = (await read.json()) as { status_code?: string };
    if (status_code && status_code !== "IN_PROGRESS") {
      if (status_code !== "FINISHED") throw new Error(`the sample reel ended ${status_code}`);
      return performance.now() - t0;
    }
    if (performance.now() - t0 > 120_000) throw new Error("the sandbox did not finish the sample reel within 120 s");
    await sleep(20);
  }
}

async function publishOnce(ctx: BenchContext, videoUrl: string, interval: number): Promise<ReelFlowRun> {
  const t0 = performance.now();
  const created = await postJson(ctx, "/api/reels", ctx.demo, { account_id: ctx.reelAccount.id, video_url: videoUrl, caption: "bench" });
  if (created.status !== 202) throw new Error(`POST /api/reels answered ${created.status}: ${JSON.stringify(created.body)}`);
  const id = String(created.body.publication_id);
  for (;;) {
    const view = await getJson<{ status: string; polls: unknown[] }>(ctx, `/api/reels/${id}`, ctx.demo);
    if (["PUBLISHED", "FAILED", "TIMED_OUT"].includes(view.status)) {
      const totalMs = performance.now() - t0;
      const run = { pollIntervalMs: interval, totalMs, polls: view.polls.length, overheadMs: totalMs - view.polls.length * interval, status: view.status };
      ctx.log(`reel flow at ${interval} ms polls: ${view.status} in ${Math.round(totalMs)} ms, ${run.polls} polls, overhead ${Math.round(run.overheadMs)} ms`);
      return run;
    }
    if (performance.now() - t0 > 300_000) throw new Error("the publication did not settle within 300 s");
    await sleep(20);
  }
}
