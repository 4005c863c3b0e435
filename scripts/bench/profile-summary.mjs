// Summarises a .cpuprofile written under BENCH_PROFILE=1: `node scripts/bench/profile-summary.mjs <file> [jobs]`.
// Self time by category; a native or node-internal frame is charged to its nearest caller in a package or in
// our code, so socket writes count for ioredis or kafkajs. Sampled time includes time the process was runnable
// but descheduled on a busy machine: read the shares, and take absolute CPU from /proc (the bench logs it).
import fs from "node:fs";
const [file, jobsArg] = process.argv.slice(2);
const jobs = Number(jobsArg || 0);
const p = JSON.parse(fs.readFileSync(file, "utf8"));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map();
for (let i = 0; i < p.samples.length; i++)
  self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
function cat(url) {
  if (!url || url.startsWith("node:")) return undefined;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) {
    const pkg = m[1];
    if (
      pkg === "redis-parser" ||
      pkg === "ioredis" ||
      pkg === "denque" ||
      pkg === "cluster-key-slot" ||
      pkg === "standard-as-callback"
    )
      return "ioredis";
    if (pkg.startsWith("@opentelemetry")) return "opentelemetry";
    if (
      pkg === "pino" ||
      pkg === "sonic-boom" ||
      pkg.startsWith("pino-") ||
      pkg === "fast-redact" ||
      pkg === "@pinojs/redact"
    )
      return "pino";
    if (pkg === "gpt-tokenizer") return "model (local-ngram, tokenizer)";
    if (pkg === "next") return "next";
    return pkg;
  }
  const l = /\/(lib|worker|app)\/([^?]+)/.exec(url);
  if (l) {
    const f = `${l[1]}/${l[2]}`;
    if (/lib\/jobs\/providers|lib\/jobs\/tokens/.test(f)) return "model (local-ngram, tokenizer)";
    if (/lib\/webhooks/.test(f)) return "lib/webhooks";
    if (/lib\/consume/.test(f)) return "lib/consume (kit)";
    if (/lib\/metrics/.test(f)) return "lib/metrics.ts";
    return f.replace(/^(lib\/[^/]+)\/.*/, "$1/*");
  }
  return undefined;
}
const totals = new Map();
let busy = 0;
for (const [id, us] of self) {
  const n = byId.get(id);
  const fn = n.callFrame.functionName;
  if (fn === "(idle)") continue;
  busy += us;
  let c;
  if (fn === "(garbage collector)") c = "(gc)";
  else if (fn === "(program)") c = "(program)";
  else {
    for (let cur = id; cur !== undefined && !c; cur = parent.get(cur)) c = cat(byId.get(cur).callFrame.url);
    c ??= fn === "runMicrotasks" ? "(microtasks)" : "(node internal, no JS caller)";
  }
  totals.set(c, (totals.get(c) ?? 0) + us);
}
console.log(`${file}: busy ${(busy / 1e3).toFixed(0)} ms${jobs ? `, ${(busy / jobs).toFixed(0)} µs/job` : ""}`);
for (const [c, us] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 25))
  console.log(
    `${(us / 1e3).toFixed(0).padStart(7)} ms ${((us / busy) * 100).toFixed(1).padStart(5)}%${jobs ? ` ${(us / jobs).toFixed(0).padStart(5)} µs/job` : ""}  ${c}`,
  );
