import type { AccountView } from "@/lib/accounts/account";
import type { PublishedPost } from "@/lib/reels/list-published-posts";
import type { AccountInsightsRow, ReelInsightsView } from "@/lib/graph/insights-metrics";
import type { PublicationView } from "@/lib/reels/publication";
import { fetchJson } from "../api";

export type Publication = PublicationView;
export type Account = AccountView;

/** Query keys and fetchers of the reels API, shared by the reels components. */
export const reelKeys = {
  accounts: ["accounts"] as const,
  list: ["reels"] as const,
  /** One status's list ("" for all): under `list`, so invalidating the list refreshes every filter. */
  filtered: (status: string) => ["reels", "list", status] as const,
  one: (id: string) => ["reels", id] as const,
  posts: (accountId: string) => ["posts", accountId] as const,
  insights: (id: string) => ["reels", id, "insights"] as const,
  accountInsights: (accountId: string, sort: string, order: string) =>
    ["account-insights", accountId, sort, order] as const,
};

export const fetchAccounts = () => fetchJson<{ data: Account[] }>("/v1/accounts");
export const fetchPublications = (cursor?: string | null, status = "") =>
  fetchJson<{ data: Publication[]; next_cursor: string | null }>(
    `/v1/reels?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}${status ? `&status=${status}` : ""}`,
  );
export const fetchPublication = (id: string) => fetchJson<Publication>(`/v1/reels/${encodeURIComponent(id)}`);
export const fetchPosts = (accountId: string) =>
  fetchJson<{ data: PublishedPost[] }>(`/v1/accounts/${encodeURIComponent(accountId)}/posts`);
export const cancelPublication = (id: string) =>
  fetchJson<Publication>(`/v1/reels/${encodeURIComponent(id)}`, { method: "DELETE" });
export const editPublication = (id: string, changes: { publish_at?: string; caption?: string }) =>
  fetchJson<Publication>(`/v1/reels/${encodeURIComponent(id)}`, { method: "PATCH", json: changes });
export const fetchInsights = (id: string) =>
  fetchJson<ReelInsightsView>(`/v1/reels/${encodeURIComponent(id)}/insights`);
export const fetchAccountInsights = (accountId: string, sort: string, order: "asc" | "desc") =>
  fetchJson<{ data: AccountInsightsRow[] }>(
    `/v1/accounts/${encodeURIComponent(accountId)}/insights?sort=${encodeURIComponent(sort)}&order=${order}`,
  );
