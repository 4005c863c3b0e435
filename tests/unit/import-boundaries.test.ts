import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers";

/**
 * Who may import what, read from the source (docs/architecture.md, "Where the code lives"):
 * - nothing in production reaches the Graph sandbox but its own host, app/graph/;
 * - a generic module (lib's root, and lib/accept, consume, net, stream, web, worker) never
 *   imports a feature folder: the feature passes what the generic module needs;
 * - lib/ is framework-free (no next/*, no React), so the worker runs it as plain Node;
 * - the web side (app/, lib/web/) and the worker side (worker/, lib/worker/) never import each other's folder;
 * - jobs and reels reach webhooks by events on the log (the audit topic, reels.publication.events);
 * - lib/graph and lib/video sit below the features (the generic rule covers them); accounts reach
 *   reels only to release the publications that waited for a reconnected account;
 * - each process has one composition root (lib/web/services.ts, lib/worker/services.ts), the only
 *   places that build the connected accounts and the Graph pacer.
 */

const FEATURES = ["jobs", "responses", "reels", "accounts", "webhooks", "uploads", "system", "usage"];
const SANDBOX = "lib/graph/sandbox/";

/** Generic modules that name features on purpose, each with its reason. */
const REGISTRIES: Record<string, string> = {
  "lib/topics.ts": "the topic registry: each topic's name beside its payload schema",
  "lib/openapi/": "the API's document: every operation with the schemas its route validates with",
  "lib/web/services.ts": "the web process's composition root: it builds the clients the features take",
  "lib/worker/services.ts": "the worker process's composition root: it builds what its consumers and schedules share",
};

/** The composition roots: the only production files that build the per-process objects below. */
const ROOTS = ["lib/web/services.ts", "lib/worker/services.ts"];

const SOURCE = /\.(ts|tsx|mts)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(path.join(ROOT, file)).isDirectory()) return sourceFiles(file);
    return SOURCE.test(name) ? [file] : [];
  });
}

/** What a file imports (static, dynamic, `export … from`): project files as repo paths, packages by name. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(path.join(ROOT, file), "utf8"), true, true);
  return info.importedFiles.map(({ fileName }) => resolve(file, fileName));
}

function resolve(from: string, specifier: string): string {
  let base: string;
  if (specifier.startsWith("@/")) base = specifier.slice(2);
  else if (specifier.startsWith(".")) base = path.join(path.dirname(from), specifier);
  else return specifier;
  const found = ["", ".ts", ".tsx", "/index.ts"]
    .map((ext) => base + ext)
    .find((p) => existsSync(path.join(ROOT, p)) && statSync(path.join(ROOT, p)).isFile());
  return found ?? base;
}

const featureOf = (file: string) => FEATURES.find((f) => file.startsWith(`lib/${f}/`));
const isRegistry = (file: string) =>
  Object.keys(REGISTRIES).some((entry) => file === entry || (entry.endsWith("/") && file.startsWith(entry)));
const under = (file: string, ...dirs: string[]) => dirs.some((dir) => file.startsWith(dir));

const FILES = [
  ...sourceFiles("lib"),
  ...sourceFiles("app"),
  ...sourceFiles("worker"),
  ...sourceFiles("components"),
  "instrumentation.ts",
  "proxy.ts",
];
const EDGES = FILES.flatMap((file) => importsOf(file).map((target) => ({ file, target })));

/** Edges that break a rule, as "importer -> imported" lines, so a failure names every one. */
const offending = (rule: (edge: { file: string; target: string }) => boolean) =>
  EDGES.filter(rule).map(({ file, target }) => `${file} -> ${target}`);

describe("import boundaries", () => {
  it("reads the imports of every file", () => {
    expect(FILES.length).toBeGreaterThan(200);
    expect(EDGES).toContainEqual({ file: "lib/jobs/submit-job.ts", target: "lib/accept/accept-work.ts" });
  });

  it("keeps the sandbox a leaf: only its host, app/graph/, imports it", () => {
    expect(
      offending(
        ({ file, target }) => target.startsWith(SANDBOX) && !file.startsWith(SANDBOX) && !file.startsWith("app/graph/"),
      ),
    ).toEqual([]);
  });

  it("has no generic module importing a feature folder, except the registries", () => {
    const generic = (file: string) => file.startsWith("lib/") && !featureOf(file) && !isRegistry(file);
    expect(offending(({ file, target }) => generic(file) && featureOf(target) !== undefined)).toEqual([]);
  });

  it("keeps lib/ free of Next.js and React", () => {
    const framework = /^(next|react|react-dom|server-only)(\/|$)/;
    expect(offending(({ file, target }) => file.startsWith("lib/") && framework.test(target))).toEqual([]);
  });

  it("keeps the web side and the worker side out of each other's folders", () => {
    const web = (file: string) => under(file, "app/", "lib/web/", "components/");
    const worker = (file: string) => under(file, "worker/", "lib/worker/");
    expect(offending(({ file, target }) => (web(file) && worker(target)) || (worker(file) && web(target)))).toEqual([]);
  });

  it("lets jobs and reels reach webhooks only by their events on the log, never by a call", () => {
    expect(
      offending(({ file, target }) => under(file, "lib/jobs/", "lib/reels/") && target.startsWith("lib/webhooks/")),
    ).toEqual([]);
  });

  it("keeps accounts below reels: only the release of waiting publications crosses", () => {
    const release = "lib/reels/release-waiting-publications.ts";
    expect(
      offending(
        ({ file, target }) => file.startsWith("lib/accounts/") && target.startsWith("lib/reels/") && target !== release,
      ),
    ).toEqual([]);
  });

  it("builds the connected accounts and the Graph pacer only in the two composition roots", () => {
    // Built anywhere else, each feature gets its own again (a pacer per login request, as once).
    // One entry per call, so a root that builds one twice fails too.
    const calls = (pattern: RegExp) =>
      FILES.flatMap((file) => [...readFileSync(path.join(ROOT, file), "utf8").matchAll(pattern)].map(() => file));
    expect(calls(/\bnew ConnectedAccounts\(/g).sort()).toEqual(ROOTS);
    expect(calls(/(?<!function )\bcreateGraphPacer\(/g).sort()).toEqual(ROOTS);
  });

  it("names registries that exist", () => {
    for (const entry of Object.keys(REGISTRIES)) expect(existsSync(path.join(ROOT, entry)), entry).toBe(true);
  });
});
