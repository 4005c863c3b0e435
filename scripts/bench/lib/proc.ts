import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

/** CPU and memory of the stack's processes, read from /proc (Linux only; zeros elsewhere). */

let tickMs: number | undefined;
function clockTickMs(): number {
  if (tickMs === undefined) {
    try {
      tickMs = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    } catch {
      tickMs = 10;
    }
  }
  return tickMs;
}

/** The process and all its descendants (next start may fork; tsx may too). */
export function processTree(pid: number): number[] {
  const all = [pid];
  for (let i = 0; i < all.length; i++) {
    try {
      for (const tid of readdirSync(`/proc/${all[i]}/task`)) {
        const children = readFileSync(`/proc/${all[i]}/task/${tid}/children`, "utf8").trim();
        if (children) all.push(...children.split(/\s+/).map(Number));
      }
    } catch {
      // gone meanwhile
    }
  }
  return all;
}

/** User + system CPU time of the processes so far, in ms. */
export function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // Fields after the command name (which may hold spaces) start at the last ")".
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks * clockTickMs();
}

/** Resident memory of the processes, in MiB. */
export function rssMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (match) kb += Number(match[1]);
    } catch {
      // gone meanwhile
    }
  }
  return kb / 1024;
}

export interface ProcUsage {
  /** Average CPU over the window, in % of one core. */
  cpuPct: number;
  /** CPU time over the window, in ms (watchProcesses; figures that compute cpuPct themselves leave it out). */
  cpuMs?: number;
  peakRssMb: number;
}

/**
 * Watches named processes over a window: CPU from the difference of their CPU time, peak RSS from
 * samples every 250 ms. Processes are looked up by a function, so a restarted child is followed.
 */
export function watchProcesses(named: Record<string, number | undefined>): { stop(): Record<string, ProcUsage> } {
  const entries = Object.entries(named).filter((e): e is [string, number] => e[1] !== undefined);
  const started = performance.now();
  const cpu0 = new Map(entries.map(([name, pid]) => [name, cpuMs(processTree(pid))]));
  // The last CPU time seen, so a process that exits before the window closes keeps what it used.
  const cpuLast = new Map(cpu0);
  const peak = new Map(entries.map(([name]) => [name, 0]));
  const sample = () => {
    for (const [name, pid] of entries) {
      const tree = processTree(pid);
      peak.set(name, Math.max(peak.get(name)!, rssMb(tree)));
      cpuLast.set(name, Math.max(cpuLast.get(name)!, cpuMs(tree)));
    }
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const wall = performance.now() - started;
      return Object.fromEntries(
        entries.map(([name]) => [
          name,
          {
            cpuPct: wall > 0 ? ((cpuLast.get(name)! - cpu0.get(name)!) / wall) * 100 : NaN,
            cpuMs: cpuLast.get(name)! - cpu0.get(name)!,
            peakRssMb: peak.get(name)!,
          },
        ]),
      );
    },
  };
}

/**
 * Forks Redis has made since it started (INFO stats): with AOF on, each is a rewrite of the AOF,
 * whose child's CPU counts as Redis's and which shares the cores with everything else. A drain
 * with one and a drain without are not the same measurement.
 */
export async function redisForks(redis: { info(section: string): Promise<string> }): Promise<number> {
  return Number(/^total_forks:(\d+)/m.exec(await redis.info("stats"))?.[1] ?? NaN);
}

type InfoRedis = {
  info(section: string): Promise<string>;
  config(...args: string[]): Promise<unknown>;
  bgrewriteaof(): Promise<unknown>;
};

/**
 * Runs `measure` with no AOF rewrite in it: the AOF is rewritten first (and waited for), and
 * automatic rewrites are off until `measure` ends. Whether a rewrite lands inside a drain depends on
 * how much earlier figures wrote, not on the code measured, and one that does doubles Redis's CPU
 * per job and slows the drain (seen in A/B rounds). The embedded Redis only: a REDIS_URL's settings
 * are not the bench's to change.
 */
export async function withoutAofRewrite<T>(redis: InfoRedis, measure: () => Promise<T>): Promise<T> {
  const [, percentage] = (await redis.config("GET", "auto-aof-rewrite-percentage")) as [string, string];
  await redis.config("SET", "auto-aof-rewrite-percentage", "0");
  try {
    await redis.bgrewriteaof().catch(() => {}); // refused while one runs already: that one is waited for
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && /^aof_rewrite_(in_progress|scheduled):1/m.test(await redis.info("persistence")))
      await new Promise((resolve) => setTimeout(resolve, 100));
    return await measure();
  } finally {
    await redis.config("SET", "auto-aof-rewrite-percentage", percentage);
  }
}

/** Calls and microseconds per Redis command since the last CONFIG RESETSTAT (INFO commandstats). */
export async function redisCommandStats(redis: {
  info(section: string): Promise<string>;
}): Promise<Record<string, { calls: number; usec: number }>> {
  const out: Record<string, { calls: number; usec: number }> = {};
  for (const line of (await redis.info("commandstats")).split("\n")) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (match) out[match[1]] = { calls: Number(match[2]), usec: Number(match[3]) };
  }
  return out;
}

/** Machine-wide counters that say whether a measurement ran on a machine slowed from outside. */
export interface MachineStall {
  /** CPU time the hypervisor gave to others while this VM wanted it (/proc/stat steal), ms over all CPUs. */
  stealMs: number;
  /** Time some task waited on I/O (/proc/pressure/io "some"), ms; undefined without PSI. */
  ioWaitMs?: number;
  /** Time some runnable task waited for a CPU (/proc/pressure/cpu "some"), ms; undefined without PSI. */
  cpuWaitMs?: number;
}

function readMachineCounters(): MachineStall {
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return undefined;
    }
  };
  const cpu = read("/proc/stat")?.split("\n")[0].trim().split(/\s+/) ?? [];
  const ticks = 1000 / 100; // USER_HZ is 100 on Linux
  const pressure = (text: string | undefined) => {
    const total = /^some .*total=(\d+)/m.exec(text ?? "")?.[1];
    return total === undefined ? undefined : Number(total) / 1000;
  };
  return {
    stealMs: Number(cpu[8] ?? 0) * ticks,
    ioWaitMs: pressure(read("/proc/pressure/io")),
    cpuWaitMs: pressure(read("/proc/pressure/cpu")),
  };
}

/** Starts counting steal and pressure stalls; `stop` returns what accrued since. */
export function watchMachine(): { stop(): MachineStall } {
  const before = readMachineCounters();
  return {
    stop() {
      const after = readMachineCounters();
      const diff = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : a - b);
      return {
        stealMs: after.stealMs - before.stealMs,
        ioWaitMs: diff(after.ioWaitMs, before.ioWaitMs),
        cpuWaitMs: diff(after.cpuWaitMs, before.cpuWaitMs),
      };
    },
  };
}
