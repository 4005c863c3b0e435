import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

const SOURCES = [
  "app",
  "components",
  "lib",
  "public",
  "next.config.mjs",
  "package-lock.json",
  "postcss.config.mjs",
  "tsconfig.json",
  "scripts/lib/build.ts",
];

/** Written after a build made with the canaries, so a test knows its look for them means something. */
export const CANARY_MARKER = ".next/build-canaries.json";

function newestMtime(p: string): number {
  if (!existsSync(p)) return 0;
  const stat = statSync(p);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(p).map((f) => newestMtime(path.join(p, f))));
}

const CANARY_KEY = "dk_BUILDCANARYkey6f1d0c9e2b7a";
const CANARY_TOKEN = "EAAGBUILDCANARYtoken5a3e81c07d";
/**
 * What `next build` gets in place of every secret variable. The real values never reach the
 * build (nothing secret can be inlined into what it emits), and a test can look for these in
 * `.next/static`: keys made after the build could never be found there.
 */
export const BUILD_SECRET_CANARIES = {
  API_KEYS: `buildcanary:${CANARY_KEY}`,
  REEL_ACCOUNTS: `buildcanary:17841499999999999:${CANARY_TOKEN}`,
  LLM_API_KEY: "sk-BUILDCANARYllm4b9f2e6a1c03",
  SESSION_SECRET: "BUILDCANARYsession8e2d4f6a0b1c3e5d7f9a2b4c",
  ACCOUNTS_SECRET: "BUILDCANARYaccounts1f3e5d7c9b2a4f6e8d0c2b",
  SANDBOX_ADMIN_TOKEN: "BUILDCANARYadmin7c5e3a1f9d2b4e6c",
  REDIS_URL: "",
} as const;

/** The canaries' secret parts: what must never show in the build's output. */
export const BUILD_CANARY_SECRETS = [
  CANARY_KEY,
  CANARY_TOKEN,
  BUILD_SECRET_CANARIES.LLM_API_KEY,
  BUILD_SECRET_CANARIES.SESSION_SECRET,
  BUILD_SECRET_CANARIES.ACCOUNTS_SECRET,
  BUILD_SECRET_CANARIES.SANDBOX_ADMIN_TOKEN,
];

/** Runs `next build` when there is no build or a source is newer than it. */
export function buildIfStale(root: string): void {
  const buildId = path.join(root, ".next/BUILD_ID");
  const built = existsSync(buildId) ? statSync(buildId).mtimeMs : 0;
  const newest = Math.max(...SOURCES.map((s) => newestMtime(path.join(root, s))));
  if (built > newest) return;
  process.stdout.write("building the web app (next build)…\n");
  execFileSync(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, ...BUILD_SECRET_CANARIES, NEXT_TELEMETRY_DISABLED: "1" },
  });
  writeFileSync(path.join(root, CANARY_MARKER), `${JSON.stringify(Object.keys(BUILD_SECRET_CANARIES))}\n`);
}
