import { auth, postJson, startWorkers, type BenchContext } from "../lib/context";
import { openSse } from "../lib/sse-client";
import { sleep, summarize, type Summary } from "../lib/stats";

export interface ResponsesFirstTokenResult {
  samples: number;
  /** POST /v1/jobs, then GET /jobs/{id}/stream: submit → first `delta` event. */
  jobs: Summary;
  /** POST /v1/responses with background and stream: request → first `response.output_text.delta`. */
  responses: Summary;
}

const PROMPT = "Stream clients subscribe first";

/** Submit → first delta at the client, one way; rejects if the stream ends without one. */
async function firstDelta(open: (onFirst: (at: number) => void) => { ended: Promise<void> }, what: string): Promise<number> {
  let first: number | undefined;
  const t0 = performance.now();
  const stream = open((at) => (first ??= at));
  await stream.ended;
  if (first === undefined) throw new Error(`${what}: the stream ended without a delta`);
  return first - t0;
}

/**
 * Figure 2b: time to first token through OpenAI's Responses surface against Dispatch's own
 * (POST /v1/jobs + /jobs/{id}/stream), the same model, prompt and worker, samples alternating
 * which goes first so drift hits both alike. Goal: within 2 ms of it at the median.
 */
export async function measureResponsesFirstToken(ctx: BenchContext, samples: number): Promise<ResponsesFirstTokenResult> {
  const set = startWorkers(ctx, 1);
  await set.ready;
  const jobs: number[] = [];
  const responses: number[] = [];
  // Both ask for 16 tokens, the least OpenAI's max_output_tokens allows.
  const viaJobs = () =>
    firstDelta((onFirst) => {
      const command = { tenant_id: ctx.demo.id, model_name: "local-ngram", prompt: PROMPT, temperature: 0, max_tokens: 16 };
      const ended = postJson(ctx, "/v1/jobs", ctx.demo, command).then((submitted) => {
        if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}: ${JSON.stringify(submitted.body)}`);
        return openSse(`${ctx.url}/jobs/${String(submitted.body.job_id)}/stream`, auth(ctx.demo), (event) => event.event === "delta" && onFirst(event.at)).ended;
      });
      return { ended };
    }, "/jobs/{id}/stream");
  const viaResponses = () =>
    firstDelta((onFirst) => {
      const body = { model: "local-ngram", input: PROMPT, temperature: 0, max_output_tokens: 16, background: true, stream: true };
      return openSse(`${ctx.url}/v1/responses`, auth(ctx.demo), (event) => event.event === "response.output_text.delta" && onFirst(event.at), undefined, body);
    }, "/v1/responses");
  try {
    for (let i = 0; i < samples + 2; i++) {
      const order = i % 2 === 0 ? [viaJobs, viaResponses] : [viaResponses, viaJobs];
      const [a, b] = [await order[0](), await order[1]()];
      if (i < 2) continue;
      jobs.push(order[0] === viaJobs ? a : b);
      responses.push(order[0] === viaJobs ? b : a);
      // A random pause, so samples do not fall into step with the consumer's fetch cycle.
      await sleep(20 + Math.random() * 250);
    }
  } finally {
    await set.stop();
  }
  const result = { samples, jobs: summarize(jobs), responses: summarize(responses) };
  ctx.log(`first token: /v1/responses p50 ${result.responses.p50.toFixed(1)} ms, /jobs/{id}/stream p50 ${result.jobs.p50.toFixed(1)} ms`);
  return result;
}
