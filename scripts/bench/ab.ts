/**
 * BENCH_AB=<commit>: the chosen figures on another commit beside the working tree, in one run.
 * The commit is checked out with `git worktree add` into a temporary directory (kept for the next
 * run; `git worktree remove` drops it), gets its own npm packages and build, and this tree's
 * scripts/bench copied over its own, so one harness measures both. The two trees then take turns
 * (A B, B A, ...: BENCH_AB_ROUNDS rounds, 2 by default), each a whole `npm run bench` of its own
 * with BENCH_ONLY (default `submit`), and the figures are put side by side as ratios, per round.
 */
import { spawn, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Results } from "./report";
import type { MachineStall } from "./lib/proc";
import { fmt, fmtRatio, median } from "./lib/stats";

interface Tree {
  name: string;
  dir: string;
}

interface Figures {
  /** Per drain (by worker count): jobs/s, CPU ms per job of the workers, Redis and the broker, and Redis forks (AOF rewrites). */
  drains: Record<
    number,
    {
      jobsPerSecond: number;
      worker: number;
      redis: number;
      broker: number;
      redisForks?: number;
      stallsMs?: number[];
      machine?: MachineStall;
    }
  >;
  /** Medians over the run's bursts: submit ÷ floor req/s, and the web process's CPU ms per submission. */
  submit?: { rpsRatio: number; webMsPerSubmission: number; webMsPerFloorRequest: number; jobsPerBatch: number };
}

const git = (cwd: string, args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

/** The commit's worktree, made if missing, with this tree's bench harness copied over its own. */
function checkout(root: string, commit: string): Tree {
  const sha = git(root, ["rev-parse", "--verify", `${commit}^{commit}`]);
  const dir = path.join(os.tmpdir(), `dispatch-bench-ab-${sha.slice(0, 12)}`);
  if (!existsSync(dir)) git(root, ["worktree", "add", "--detach", dir, sha]);
  cpSync(path.join(root, "scripts/bench"), path.join(dir, "scripts/bench"), {
    recursive: true,
    filter: (source) => path.basename(source) !== "results",
  });
  // `next build` type-checks the whole project, and this harness may import modules the commit
  // lacks (figures it does not run there): keep the harness out of that commit's check.
  const tsconfigPath = path.join(dir, "tsconfig.json");
  const tsconfig = JSON.parse(readFileSync(tsconfigPath, "utf8")) as { exclude?: string[] };
  if (!tsconfig.exclude?.includes("scripts/bench")) {
    tsconfig.exclude = [...(tsconfig.exclude ?? []), "scripts/bench"];
    writeFileSync(tsconfigPath, `${JSON.stringify(tsconfig, null, 2)}\n`);
  }
  return { name: sha.slice(0, 7), dir };
}

/** One `npm run bench` in `tree` (its setup installs its packages, its bench builds it when stale); its results. */
async function benchIn(tree: Tree, env: NodeJS.ProcessEnv): Promise<Results> {
  const child = spawn("npm", ["run", "bench"], { cwd: tree.dir, env, stdio: "inherit" });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`npm run bench in ${tree.dir} exited with ${code}`);
  return JSON.parse(readFileSync(path.join(tree.dir, ".bench-data/results.json"), "utf8")) as Results;
}

function figuresOf(results: Results): Figures {
  const drains: Figures["drains"] = {};
  for (const d of results.drains) {
    const cpu = (name: string) => (d.procs[name]?.cpuMs ?? NaN) / d.jobs;
    const workers = Object.entries(d.procs)
      .filter(([name]) => name !== "web" && name !== "redis" && name !== "broker")
      .reduce((sum, [, p]) => sum + (p.cpuMs ?? NaN), 0);
    drains[d.workers] = {
      jobsPerSecond: d.jobsPerSecond,
      worker: workers / d.jobs,
      redis: cpu("redis"),
      broker: cpu("broker"),
      redisForks: d.redisForks,
      stallsMs: d.stallsMs,
      machine: d.machine,
    };
  }
  const bursts = results.submits.filter((s) => s.procs);
  const submit = results.submits.length
    ? {
        rpsRatio: median(results.submits.map((s) => s.submit.rps / s.floor.rps)),
        webMsPerSubmission: median(bursts.map((s) => (s.procs!.submit.web?.cpuMs ?? NaN) / s.jobs)),
        webMsPerFloorRequest: median(bursts.map((s) => (s.procs!.floor.web?.cpuMs ?? NaN) / s.floor.requests)),
        jobsPerBatch: median(results.submits.map((s) => (s.recordBatches ? s.jobs / s.recordBatches : NaN))),
      }
    : undefined;
  return { drains, submit };
}

/** The table: each round's figures of the working tree (A) and the commit (B), and A ÷ B: the working tree against the commit. */
function render(rows: { round: number; a: Figures; b: Figures }[], a: Tree, b: Tree, command: string): string {
  const lines = [
    `# A/B: the ${a.name} against ${b.name}`,
    "",
    `\`${command}\`, ${new Date().toISOString()}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" / ")} at the end.`,
    `Ratios are the working tree ÷ ${b.name} (CPU below 1×: the working tree spends less). CPU is ms of CPU time (/proc, children included) per job or per request.`,
    "",
    `| round | figure | ${b.name} | ${a.name} | ratio |`,
    "|---|---|---|---|---|",
  ];
  const ratios = new Map<string, number[]>();
  const row = (round: number, what: string, x: number, y: number, digits = 2) => {
    lines.push(`| ${round} | ${what} | ${fmt(y, digits)} | ${fmt(x, digits)} | ${fmtRatio(x / y)} |`);
    ratios.set(what, [...(ratios.get(what) ?? []), x / y]);
  };
  for (const { round, a: fa, b: fb } of rows) {
    for (const workers of Object.keys(fa.drains).map(Number)) {
      const x = fa.drains[workers];
      const y = fb.drains[workers];
      if (!y) continue;
      row(round, `drain, ${workers} worker(s): jobs/s (wall clock)`, x.jobsPerSecond, y.jobsPerSecond, 0);
      row(round, `drain, ${workers} worker(s): worker CPU ms/job`, x.worker, y.worker);
      row(round, `drain, ${workers} worker(s): Redis CPU ms/job`, x.redis, y.redis);
      row(round, `drain, ${workers} worker(s): broker CPU ms/job`, x.broker, y.broker);
    }
    if (fa.submit && fb.submit) {
      row(round, "submit req/s ÷ floor req/s", fa.submit.rpsRatio, fb.submit.rpsRatio);
      row(round, "web CPU ms per submission", fa.submit.webMsPerSubmission, fb.submit.webMsPerSubmission);
      row(round, "web CPU ms per floor request", fa.submit.webMsPerFloorRequest, fb.submit.webMsPerFloorRequest);
      row(round, "burst: jobs per record batch on the log", fa.submit.jobsPerBatch, fb.submit.jobsPerBatch, 1);
    }
  }
  const forks = (f: Figures) =>
    Object.values(f.drains)
      .map((d) => d.redisForks ?? "–")
      .join(", ");
  lines.push(
    "",
    `Redis forks (AOF rewrites) during the drains, ${b.name} / ${a.name}: ${rows.map(({ round, a: fa, b: fb }) => `round ${round} ${forks(fb)} / ${forks(fa)}`).join("; ")}. A rewrite's child counts as Redis's CPU and takes a core from the rest.`,
  );
  const stalls = (f: Figures) =>
    Object.entries(f.drains)
      .map(
        ([workers, d]) =>
          `${workers}w ${d.stallsMs ? `[${d.stallsMs.map((ms) => fmt(ms / 1000, 1)).join(", ")}]` : "–"}`,
      )
      .join(" ");
  lines.push(
    "",
    `Pauses of 1 s or more with no job completing, s, ${b.name} / ${a.name}: ${rows.map(({ round, a: fa, b: fb }) => `round ${round} ${stalls(fb)} / ${stalls(fa)}`).join("; ")}. On the embedded broker a worker that joins a group already at work stops the whole group for 5 s (the mock coordinator waits its session timeout less a second): a drain with such a join is slower by that much, whichever tree runs.`,
  );
  const machine = (f: Figures) =>
    Object.entries(f.drains)
      .map(([workers, d]) =>
        d.machine
          ? `${workers}w steal ${fmt(d.machine.stealMs / 1000, 1)} s, CPU wait ${fmt((d.machine.cpuWaitMs ?? NaN) / 1000, 1)} s, I/O wait ${fmt((d.machine.ioWaitMs ?? NaN) / 1000, 1)} s`
          : `${workers}w –`,
      )
      .join("; ");
  lines.push(
    "",
    "The machine during each drain (/proc/stat steal; /proc/pressure, time some task waited), " +
      `${b.name} / ${a.name}: ${rows.map(({ round, a: fa, b: fb }) => `round ${round} ${machine(fb)} / ${machine(fa)}`).join("; ")}. ` +
      "A round whose drains differ here ran on different machines, in effect: read it with care.",
  );
  lines.push("", "| figure | ratio in each round | median |", "|---|---|---|");
  for (const [what, values] of ratios)
    lines.push(`| ${what} | ${values.map(fmtRatio).join(", ")} | ${fmtRatio(median(values))} |`);
  return `${lines.join("\n")}\n`;
}

/** Runs the A/B comparison and writes .bench-data/ab.md and ab.json in the working tree. */
export async function runAB(root: string, commit: string, log: (message: string) => void): Promise<void> {
  // "-dirty": the working tree's uncommitted changes are measured too.
  const a: Tree = { name: `working tree (${git(root, ["describe", "--always", "--dirty"])})`, dir: root };
  const b = checkout(root, commit);
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_ONLY: process.env.BENCH_ONLY ?? "submit" };
  delete env.BENCH_AB;
  const rounds = Number(process.env.BENCH_AB_ROUNDS ?? 2);
  const rows: { round: number; a: Figures; b: Figures }[] = [];
  const all: { round: number; tree: string; results: Results }[] = [];
  for (let round = 1; round <= rounds; round++) {
    // A B, then B A: whatever drifts over the run hits both alike.
    const order = round % 2 === 1 ? [a, b] : [b, a];
    const got = new Map<Tree, Figures>();
    for (const tree of order) {
      log(`A/B round ${round} of ${rounds}: ${tree.name} (${tree.dir})`);
      const results = await benchIn(tree, env);
      all.push({ round, tree: tree.name, results });
      got.set(tree, figuresOf(results));
    }
    rows.push({ round, a: got.get(a)!, b: got.get(b)! });
  }
  const command = [
    ...Object.entries(process.env)
      .filter(([k]) => k.startsWith("BENCH_"))
      .map(([k, v]) => `${k}=${v}`),
    "npm run bench",
  ].join(" ");
  const markdown = render(rows, a, b, command);
  const out = path.join(root, ".bench-data");
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, "ab.md"), markdown);
  writeFileSync(path.join(out, "ab.json"), JSON.stringify(all, null, 2));
  process.stdout.write(`\n${markdown}`);
  log("wrote .bench-data/ab.md and .bench-data/ab.json");
}
