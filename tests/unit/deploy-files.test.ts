import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CONFIG_VARIABLES, parseConfig } from "@/lib/config";
import { ALL_TOPICS } from "@/lib/topics";
import { servedHostNames } from "@/lib/net/served-hosts";

/**
 * compose.yaml and the Dockerfile cannot run on this machine (no Docker): this keeps them true to
 * the code instead. Services, variables against the config schema, commands against package.json,
 * topics against lib/topics.ts, and the Dockerfile's stages against the files they copy.
 */
const ROOT = path.resolve(__dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
// merge: the `<<: *dispatch-env` keys, as compose reads them.
const compose = parse(read("compose.yaml"), { merge: true });
const pkg = JSON.parse(read("package.json")) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};
const services = compose.services as Record<string, Record<string, unknown>>;
const REQUIRED = ["REDIS_URL", "KAFKA_BROKERS", "API_KEYS"];
// What an operator puts in .env for the ${NAME:?} variables.
const OPERATOR_ENV: Record<string, string> = {
  API_KEYS: "acme:acme-key-0123456789abcdef",
  SESSION_SECRET: "s".repeat(40),
  ACCOUNTS_SECRET: "a".repeat(40),
};

/** Compose's interpolation, as `docker compose up` applies it with OPERATOR_ENV in .env. */
function interpolate(value: unknown): string {
  return String(value).replace(
    /\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g,
    (_, name: string, kind?: string, rest = "") => {
      if (name in OPERATOR_ENV) return OPERATOR_ENV[name];
      if (kind === "?") throw new Error(`${name} is required (${rest}) and OPERATOR_ENV does not set it`);
      return kind === "-" ? rest : "";
    },
  );
}
const environment = (service: string) =>
  Object.fromEntries(
    Object.entries(services[service].environment as Record<string, unknown>).map(([k, v]) => [k, interpolate(v)]),
  );
const command = (service: string) => services[service].command as string[];

describe("compose.yaml", () => {
  it("runs the web server, two workers, Redis, Kafka and the topic creator", () => {
    expect(Object.keys(services).sort()).toEqual(["kafka", "kafka-init", "redis", "web", "worker"]);
    expect((services.worker.deploy as { replicas: number }).replicas).toBe(2);
    expect(services.web.image).toBe(services.worker.image);
  });

  it("gives Dispatch's processes only variables of the config schema, the required ones set, and a configuration that parses", () => {
    for (const name of ["web", "worker"]) {
      const env = environment(name);
      expect(
        Object.keys(env).filter((k) => !(CONFIG_VARIABLES as string[]).includes(k)),
        `${name}: variables lib/config.ts does not read`,
      ).toEqual([]);
      for (const variable of [...REQUIRED, "SESSION_SECRET"])
        expect(env[variable], `${name}: ${variable}`).toBeTruthy();
      expect(() => parseConfig(env), name).not.toThrow();
      expect(parseConfig(env).KAFKA_BROKERS).toEqual(["kafka:9092"]);
      expect(parseConfig(env).REDIS_URL).toBe("redis://redis:6379/0");
    }
    // The sandbox lives on the web server; the workers reach it by the service's name and port.
    const web = parseConfig(environment("web"));
    expect(web.GRAPH_SANDBOX).toBe(true);
    expect(parseConfig(environment("worker")).GRAPH_URL).toBe(`http://web:${web.PORT}/graph`);
    // …and the web server answers that name (any Host it does not serve gets 421).
    expect(servedHostNames(web).has(new URL(parseConfig(environment("worker")).GRAPH_URL).hostname)).toBe(true);
    expect(services.web.ports).toEqual([`${web.PORT}:${web.PORT}`]);
  });

  it("runs commands that exist: the worker's npm script and the web server the image builds", () => {
    expect(command("worker").slice(0, 2)).toEqual(["npm", "run"]);
    expect(pkg.scripts[command("worker")[2]]).toBe("node --import tsx worker/index.ts");
    expect(command("web")).toEqual(dockerfileCmd());
  });

  it("starts Dispatch after Redis is healthy and the topics exist, and checks every dependency it waits on", () => {
    for (const name of ["web", "worker"]) {
      expect(services[name].depends_on).toMatchObject({
        redis: { condition: "service_healthy" },
        "kafka-init": { condition: "service_completed_successfully" },
      });
    }
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(
        (service.depends_on ?? {}) as Record<string, { condition: string }>,
      )) {
        expect(services[dependency], `${name} depends on ${dependency}`).toBeDefined();
        if (condition === "service_healthy")
          expect(services[dependency].healthcheck, `${dependency} needs a health check`).toBeDefined();
      }
    }
    expect(services["kafka-init"].depends_on).toEqual({ kafka: { condition: "service_healthy" } });
    expect(services.web.healthcheck).toBeDefined();
  });

  it("keeps Redis's writes in an append-only file on a volume", () => {
    expect((services.redis.command as string[]).join(" ")).toContain("--appendonly yes");
    expect(services.redis.volumes).toEqual(["redis-data:/data"]);
    const declared = Object.keys(compose.volumes);
    const used = Object.values(services).flatMap((s) => ((s.volumes ?? []) as string[]).map((v) => v.split(":")[0]));
    expect([...new Set(used)].sort()).toEqual(declared.sort());
  });

  it("runs the official Kafka image as one KRaft broker and controller, topics made only on purpose", () => {
    expect(services.kafka.image).toMatch(/^apache\/kafka:\d+\.\d+\.\d+$/);
    const env = services.kafka.environment as Record<string, string | number>;
    expect(String(env.KAFKA_PROCESS_ROLES).split(",").sort()).toEqual(["broker", "controller"]);
    expect(env.KAFKA_CONTROLLER_QUORUM_VOTERS).toBe(`${env.KAFKA_NODE_ID}@kafka:9093`);
    expect(String(env.KAFKA_ADVERTISED_LISTENERS)).toBe("PLAINTEXT://kafka:9092");
    expect(env.KAFKA_AUTO_CREATE_TOPICS_ENABLE).toBe("false");
    // A KRaft cluster id is 16 bytes, base64url without padding.
    expect(Buffer.from(String(env.CLUSTER_ID), "base64url")).toHaveLength(16);
    expect(services["kafka-init"].image).toBe(services.kafka.image);
  });

  it("creates every topic of lib/topics.ts with its partition count and infinite retention", () => {
    const script = (services["kafka-init"].command as string[]).join("\n");
    const created = [
      ...script.matchAll(/--create --if-not-exists --topic (\S+) --partitions (\d+) --replication-factor (\d+)(.*)/g),
    ];
    expect(created.map(([, name, partitions]) => ({ name, partitions: Number(partitions) }))).toEqual(
      ALL_TOPICS.map((t) => ({ name: t.name, partitions: t.partitions })),
    );
    for (const [line, , , , rest] of created) expect(rest.trim(), line).toBe("--config retention.ms=-1");
  });
});

interface Stage {
  name: string;
  lines: { instruction: string; args: string }[];
}

function dockerfileStages(): Stage[] {
  const stages: Stage[] = [];
  for (const raw of read("Dockerfile").split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const [instruction, ...rest] = line.split(/\s+/);
    const args = rest.join(" ");
    if (instruction === "FROM")
      stages.push({ name: /\bAS\s+(\S+)$/i.exec(args)?.[1] ?? String(stages.length), lines: [] });
    stages.at(-1)?.lines.push({ instruction, args });
  }
  return stages;
}
function dockerfileCmd(): string[] {
  const cmd = dockerfileStages()
    .at(-1)!
    .lines.filter((l) => l.instruction === "CMD")
    .at(-1)!;
  return JSON.parse(cmd.args);
}

describe("Dockerfile", () => {
  const stages = dockerfileStages();
  const runtime = stages.at(-1)!;
  const copies = (stage: Stage) =>
    stage.lines
      .filter((l) => l.instruction === "COPY")
      .map((l) => l.args.split(/\s+/).filter((a) => !a.startsWith("--")));
  const ignored = read(".dockerignore")
    .split("\n")
    .filter((l) => l && !l.startsWith("#") && !l.startsWith("!"));

  it("builds in stages and runs as a user other than root", () => {
    expect(stages.length).toBeGreaterThanOrEqual(3);
    const user = runtime.lines.filter((l) => l.instruction === "USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(["root", "0"]).not.toContain(user);
  });

  it("copies only from earlier stages, and only files that exist and the build context keeps", () => {
    stages.forEach((stage, i) => {
      for (const line of stage.lines.filter((l) => l.instruction === "COPY")) {
        const from = /--from=(\S+)/.exec(line.args)?.[1];
        if (from)
          expect(
            stages.slice(0, i).map((s) => s.name),
            line.args,
          ).toContain(from);
      }
    });
    for (const stage of stages) {
      for (const line of stage.lines.filter((l) => l.instruction === "COPY" && !/--from=/.test(l.args))) {
        const sources = line.args
          .split(/\s+/)
          .filter((a) => !a.startsWith("--"))
          .slice(0, -1);
        for (const source of sources.filter((s) => s !== ".")) {
          expect(existsSync(path.join(ROOT, source)), `COPY ${source}`).toBe(true);
          expect(
            ignored.some((pattern) => source === pattern || source.startsWith(`${pattern}/`)),
            `${source} is in .dockerignore`,
          ).toBe(false);
        }
      }
    }
  });

  it("builds with npm scripts that exist, as Next's standalone output", async () => {
    const runs = stages.flatMap((s) => s.lines.filter((l) => l.instruction === "RUN").map((l) => l.args));
    for (const run of runs)
      for (const [, script] of run.matchAll(/npm run (\S+)/g)) expect(pkg.scripts, run).toHaveProperty(script);
    const env = stages.flatMap((s) =>
      s.lines.filter((l) => l.instruction === "ENV").flatMap((l) => l.args.split(/\s+/)),
    );
    expect(env).toContain("NEXT_OUTPUT=standalone");
    const original = process.env.NEXT_OUTPUT;
    process.env.NEXT_OUTPUT = "standalone";
    try {
      const { default: nextConfig } = (await import(pathToFileURL(path.join(ROOT, "next.config.mjs")).href)) as {
        default: { output?: string };
      };
      expect(nextConfig.output).toBe("standalone");
    } finally {
      if (original === undefined) delete process.env.NEXT_OUTPUT;
      else process.env.NEXT_OUTPUT = original;
    }
    // Besides Next's own and the standalone server's HOSTNAME, the image sets only configuration variables.
    const names = env.map((pair) => pair.split("=")[0]);
    expect(
      names.filter(
        (n) =>
          !(CONFIG_VARIABLES as string[]).includes(n) &&
          !["NEXT_TELEMETRY_DISABLED", "NEXT_OUTPUT", "HOSTNAME"].includes(n),
      ),
    ).toEqual([]);
  });

  it("runs the web server by default and holds what the worker's command needs", () => {
    expect(dockerfileCmd()).toEqual(["node", "server.js"]);
    const copied = copies(runtime).map((args) => args.slice(0, -1));
    expect(copied).toContainEqual(["/app/.next/standalone"]);
    expect(copied).toContainEqual(["/app/.next/static"]);
    const sources = copied.flat();
    // npm run worker: node --import tsx worker/index.ts, with lib/ and the docs local-ngram trains on.
    for (const needed of [
      "package.json",
      "tsconfig.json",
      "lib",
      "worker",
      "docs",
      "README.md",
      "public",
      "/app/node_modules",
    ])
      expect(sources, needed).toContain(needed);
    expect(pkg.dependencies).toHaveProperty("tsx");
    const prodDeps = stages.find((s) => s.lines.some((l) => l.instruction === "RUN" && l.args.includes("--omit=dev")));
    expect(copies(runtime).find((args) => args[0] === "/app/node_modules")).toBeDefined();
    expect(runtime.lines.find((l) => l.args.includes("/app/node_modules"))?.args).toContain(`--from=${prodDeps?.name}`);
  });
});
