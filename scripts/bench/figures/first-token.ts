import { parseConfig } from "../../../lib/config";
import { createLocalNgram, readShippedCorpus } from "../../../lib/jobs/providers/local-ngram";
import { auth, getJson, postJson, startWorkers, type BenchContext } from "../lib/context";
import { openSse } from "../lib/sse-client";
import { sleep, summarize, type Summary } from "../lib/stats";

export interface FirstTokenResult {
  samples: number;
  /** Samples run before them and not counted. */
  warmUpSamples?: number;
  tokensPerSecond: number;
  /** submit → first delta at an SSE client, through the whole pipeline. */
  pipeline: Summary;
  /** The same model, same corpus, pace and prompt, called in this process. */
  direct: Summary;
  /** Medians of where the pipeline's time goes. */
  parts: { submit: number; toWorker: number; worker: number; delivery: number };
  /** The worker's fetch long-poll in this measurement (KAFKA_FETCH_WAIT_MS). */
  fetchWaitMs?: number;
}

const PROMPT = "Stream clients subscribe first";
/**
 * Samples run first and not counted: a web server and worker just started run their code cold
 * (compiled as first called), which took a measured figure's submit part from ~6.5 to ~9.3 ms when
 * this figure ran first (BENCH_ONLY=ttft) with two of them. The figure is about a running stack.
 */
const WARM_UP_SAMPLES = 20;

/**
 * Figure 2: time to first token through the pipeline (POST /v1/jobs, Kafka, a worker, Redis,
 * the web server's SSE) against the model alone. Samples alternate so drift hits both alike;
 * temperature 0 makes both produce the same first token.
 */
export async function measureFirstToken(ctx: BenchContext, samples: number, fetchWaitMs?: number): Promise<FirstTokenResult> {
  const tokensPerSecond = parseConfig(ctx.stack.env).LOCAL_MODEL_TOKENS_PER_SECOND;
  const model = createLocalNgram({ corpus: readShippedCorpus(ctx.root), tokensPerSecond });
  // Unset: the worker's wait as the stack sets it (KAFKA_FETCH_WAIT_MS, shortened on the embedded broker).
  const set = startWorkers(ctx, 1, fetchWaitMs ? { KAFKA_FETCH_WAIT_MS: String(fetchWaitMs) } : {});
  await set.ready;
  const pipeline: number[] = [];
  const direct: number[] = [];
  const parts = { submit: [] as number[], toWorker: [] as number[], worker: [] as number[], delivery: [] as number[] };
  try {
    for (let i = 0; i < samples + WARM_UP_SAMPLES; i++) {
      const warm = i < WARM_UP_SAMPLES;
      // Direct: the provider's first delta.
      const controller = new AbortController();
      const d0 = performance.now();
      for await (const chunk of model.generate({ model: "local-ngram", prompt: PROMPT, temperature: 0, maxTokens: 4, signal: controller.signal })) {
        if ("delta" in chunk) break;
      }
      if (!warm) direct.push(performance.now() - d0);

      // Through the pipeline.
      const wall0 = Date.now();
      const t0 = performance.now();
      const submitted = await postJson(ctx, "/v1/jobs", ctx.demo, { tenant_id: ctx.demo.id, model_name: "local-ngram", prompt: PROMPT, temperature: 0, max_tokens: 4 });
      const tSubmitted = performance.now();
      if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}: ${JSON.stringify(submitted.body)}`);
      const jobId = String(submitted.body.job_id);
      let first: number | undefined;
      const stream = openSse(`${ctx.url}/jobs/${jobId}/stream`, auth(ctx.demo), (event) => {
        if (event.event === "delta" && first === undefined) first = event.at;
      });
      await stream.ended;
      if (first === undefined) throw new Error(`job ${jobId}: the stream ended without a delta`);
      const job = await getJson<{ started_at: string; ttft_ms: number }>(ctx, `/jobs/${jobId}`, ctx.demo);
      if (warm) {
        await sleep(Math.random() * 20);
        continue;
      }
      const total = first - t0;
      pipeline.push(total);
      const toWorker = Date.parse(job.started_at) - wall0 - (tSubmitted - t0);
      parts.submit.push(tSubmitted - t0);
      parts.toWorker.push(toWorker);
      parts.worker.push(job.ttft_ms);
      parts.delivery.push(total - (tSubmitted - t0) - toWorker - job.ttft_ms);
      // A random pause, so samples do not fall into step with the consumer's fetch cycle.
      await sleep(20 + Math.random() * 250);
    }
  } finally {
    await set.stop();
  }
  const result: FirstTokenResult = {
    samples,
    warmUpSamples: WARM_UP_SAMPLES,
    tokensPerSecond,
    pipeline: summarize(pipeline),
    direct: summarize(direct),
    parts: {
      submit: summarize(parts.submit).p50,
      toWorker: summarize(parts.toWorker).p50,
      worker: summarize(parts.worker).p50,
      delivery: summarize(parts.delivery).p50,
    },
  };
  result.fetchWaitMs = fetchWaitMs ?? Number(ctx.stack.env.KAFKA_FETCH_WAIT_MS ?? parseConfig(ctx.stack.env).KAFKA_FETCH_WAIT_MS);
  ctx.log(`first token (worker fetch wait ${result.fetchWaitMs} ms): pipeline p50 ${result.pipeline.p50.toFixed(1)} ms, direct p50 ${result.direct.p50.toFixed(1)} ms, parts ${JSON.stringify(result.parts)}`);
  return result;
}
