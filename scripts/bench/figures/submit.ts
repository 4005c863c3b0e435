import type autocannon from "autocannon";
import { postJson, type BenchContext, type Tenant } from "../lib/context";
import { load, type LoadResult } from "../lib/load";
import { redisCommandStats, watchProcesses, type ProcUsage } from "../lib/proc";
import { sleep } from "../lib/stats";

export interface SubmitRun {
  floor: LoadResult;
  submit: LoadResult;
  /** Ids of the jobs the submit run created (its 202 answers). */
  jobIds: string[];
  /** CPU of the stack's processes during the floor run and during the submit run. */
  procs: { floor: Record<string, ProcUsage>; submit: Record<string, ProcUsage> };
}

export const SUBMIT_PROMPT = "The worker reads the log";

/** The body of a burst job: server-generated id, a small max_tokens. */
export const burstBody = (tenant: Tenant, maxTokens: number) =>
  JSON.stringify({ tenant_id: tenant.id, model_name: "local-ngram", prompt: SUBMIT_PROMPT, max_tokens: maxTokens });

function requestsFor(tenants: Tenant[], path: string, maxTokens: number, onCreated?: (jobId: string) => void): autocannon.Request[] {
  return tenants.map((tenant) => ({
    method: "POST",
    path,
    headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
    body: burstBody(tenant, maxTokens),
    onResponse: onCreated
      ? (status: number, body: string) => {
          if (status === 202) onCreated((JSON.parse(body) as { job_id: string }).job_id);
        }
      : undefined,
  }));
}

/**
 * Figure 1: `amount` submissions at 50 connections, cycling through tenants that cover every
 * partition, right after the same number of requests with the same headers and bodies to the
 * framework floor (so drift on a shared machine hits both alike). No worker runs meanwhile: the
 * jobs queue up, as in a burst, and become the backlog of figure 4.
 */
export async function measureSubmit(ctx: BenchContext, amount: number, maxTokens: number): Promise<SubmitRun> {
  const stackPids = { web: ctx.stack.web.child.pid, redis: ctx.stack.redis?.pid, broker: ctx.stack.broker?.pid };
  const floorWatch = watchProcesses(stackPids);
  const floor = await load({ url: ctx.url, amount, requests: requestsFor(ctx.spread, "/api/bench/floor", maxTokens) });
  const floorProcs = floorWatch.stop();
  const jobIds: string[] = [];
  await ctx.redis.config("RESETSTAT");
  const submitWatch = watchProcesses(stackPids);
  const submit = await load({ url: ctx.url, amount, requests: requestsFor(ctx.spread, "/v1/jobs", maxTokens, (id) => jobIds.push(id)) });
  const submitProcs = submitWatch.stop();
  const cpu = (procs: Record<string, ProcUsage>) => Object.entries(procs).map(([name, p]) => `${name} ${Math.round(p.cpuMs ?? NaN)} ms`).join(", ");
  ctx.log(`CPU during the floor run: ${cpu(floorProcs)}; during the submit run: ${cpu(submitProcs)}; Redis commands: ${JSON.stringify(await redisCommandStats(ctx.redis))}`);
  ctx.log(
    `floor ${Math.round(floor.rps)} req/s p99 ${floor.p99} ms | submit ${Math.round(submit.rps)} req/s p50 ${submit.p50} ms p99 ${submit.p99} ms, ${jobIds.length} jobs, non-2xx ${submit.non2xx}`,
  );
  return { floor, submit, jobIds, procs: { floor: floorProcs, submit: submitProcs } };
}

/** Warms both routes up (module loading, the producer's connection) without leaving jobs behind but one. */
export async function warmUp(ctx: BenchContext): Promise<void> {
  const tenant = ctx.spread[0];
  await load({ url: ctx.url, amount: 500, requests: requestsFor([tenant], "/api/bench/floor", 4) });
  const jobId = crypto.randomUUID();
  const body = JSON.stringify({ job_id: jobId, tenant_id: tenant.id, model_name: "local-ngram", prompt: SUBMIT_PROMPT, max_tokens: 4 });
  // The same job_id and body again answer 200 without a second event: the whole path but the produce.
  await load({ url: ctx.url, amount: 500, requests: [{ method: "POST", path: "/v1/jobs", headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" }, body }] });
}

/**
 * Replaces the embedded broker with a new, empty one (Stack.restartBroker says why) and waits until
 * the web server's producer is back: a submission it acknowledges. A real cluster is left as it is.
 */
export async function freshBroker(ctx: BenchContext): Promise<void> {
  if (!ctx.stack.broker) return;
  await ctx.stack.restartBroker();
  const tenant = ctx.spread[0];
  const body = { tenant_id: tenant.id, model_name: "local-ngram", prompt: SUBMIT_PROMPT, max_tokens: 4 };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await postJson(ctx, "/v1/jobs", tenant, body).catch((error: Error) => error);
    if (!(answer instanceof Error) && answer.status === 202) return;
    if (Date.now() > deadline) {
      const last = answer instanceof Error ? answer.message : `HTTP ${answer.status}`;
      throw new Error(`no submission accepted within 60 s of a new broker (last: ${last})`);
    }
    await sleep(200);
  }
}
