import { MAX_TOKENS, TEMPERATURE } from "@/lib/jobs/status";

/** What the new-job form keeps between visits, per tenant, in this browser only. */
export interface JobFormValues {
  prompt: string;
  model: string;
  temperature: string;
  maxTokens: string;
}

export const DEFAULT_JOB_FORM: JobFormValues = {
  prompt: "",
  model: "",
  temperature: String(TEMPERATURE.default),
  maxTokens: String(MAX_TOKENS.default),
};

const key = (tenantId: string) => `dispatch:new-job:${tenantId}`;

export function recallJobForm(tenantId: string): JobFormValues | undefined {
  try {
    const raw = window.localStorage.getItem(key(tenantId));
    if (!raw) return undefined;
    const value = JSON.parse(raw) as Partial<JobFormValues>;
    const text = (v: unknown, fallback: string) => (typeof v === "string" ? v : fallback);
    return {
      prompt: text(value.prompt, DEFAULT_JOB_FORM.prompt),
      model: text(value.model, DEFAULT_JOB_FORM.model),
      temperature: text(value.temperature, DEFAULT_JOB_FORM.temperature),
      maxTokens: text(value.maxTokens, DEFAULT_JOB_FORM.maxTokens),
    };
  } catch {
    // Storage may be off (private mode) or hold something else: the form starts fresh.
    return undefined;
  }
}

export function rememberJobForm(tenantId: string, values: JobFormValues) {
  try {
    window.localStorage.setItem(key(tenantId), JSON.stringify(values));
  } catch {
    // A full or disabled storage only costs the convenience.
  }
}

/**
 * A job id made once per submission, so a second click or a retry of the same submission is the
 * same job (POST /v1/jobs is idempotent on job_id). randomUUID needs a secure context; plain-HTTP
 * deployments get the same v4 shape from getRandomValues.
 */
export function newJobId(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
