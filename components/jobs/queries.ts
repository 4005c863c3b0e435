import type { JobView } from "@/lib/jobs/read-job";
import type { ModelInfo } from "@/lib/jobs/providers/provider";
import { fetchJson } from "../api";

/** TanStack Query keys and fetchers of the jobs API, shared by the jobs components (Redis keys are lib/jobs/keys.ts). */
export const jobQueries = {
  list: ["jobs"] as const,
  /** One status's list ("" for all): under `list`, so invalidating the list refreshes every filter. */
  filtered: (status: string) => ["jobs", "list", status] as const,
  one: (id: string) => ["jobs", id] as const,
  models: ["models"] as const,
};

export const fetchJob = (id: string) => fetchJson<JobView>(`/v1/jobs/${encodeURIComponent(id)}`);
export const fetchJobs = (cursor?: string | null, status = "") =>
  fetchJson<{ data: JobView[]; next_cursor: string | null }>(
    `/v1/jobs?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}${status ? `&status=${status}` : ""}`,
  );
export const fetchModels = () => fetchJson<{ data: ModelInfo[] }>("/v1/models");
