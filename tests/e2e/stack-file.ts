import { readFileSync } from "node:fs";
import path from "node:path";

/** Where global setup tells the specs the stack's URL and API key. */
/** META_LOGIN_STATE_TTL_S of the e2e stack: how long a spec waits for a login's state to expire. */
export const LOGIN_STATE_TTL_S = 30;
/** UPLOAD_MAX_BYTES of the e2e stack: above the large reel (~8 MB), small enough for a spec to make a file past it. */
export const UPLOAD_MAX_BYTES = 32 * 1024 * 1024;

export const STACK_FILE = path.resolve(__dirname, "../../.test-data/e2e-stack.json");

export interface StackInfo {
  url: string;
  apiKey: string;
  tenantId: string;
  /** Where the web server and the workers write their output. */
  logFile: string;
}

let cached: StackInfo | undefined;

export function readStack(): StackInfo {
  cached ??= JSON.parse(readFileSync(STACK_FILE, "utf8")) as StackInfo;
  return cached;
}
