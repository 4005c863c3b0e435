import type { AccountView } from "@/lib/reels/accounts";
import type { PublishedPost } from "@/lib/reels/list-published-posts";
import type { PublicationView } from "@/lib/reels/publication";
import { fetchJson } from "../api";

/** Query keys and fetchers of the reels API, shared by the reels components. */
export const reelKeys = {
  accounts: ["accounts"] as const,
  list: ["reels"] as const,
  one: (id: string) => ["reels", id] as const,
  posts: (accountId: string) => ["posts", accountId] as const,
};

export const fetchAccounts = () => fetchJson<{ data: AccountView[] }>("/api/accounts");
export const fetchPublications = () => fetchJson<{ data: PublicationView[]; next_cursor: string | null }>("/api/reels?limit=20");
export const fetchPublication = (id: string) => fetchJson<PublicationView>(`/api/reels/${encodeURIComponent(id)}`);
export const fetchPosts = (accountId: string) => fetchJson<{ data: PublishedPost[] }>(`/api/accounts/${encodeURIComponent(accountId)}/posts`);
