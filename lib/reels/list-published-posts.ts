import type { GraphAccount, GraphClient } from "../graph/client";

/** A published reel as the dashboard shows it: no token, and a media URL the browser can load. */
export interface PublishedPost {
  id: string;
  caption: string;
  timestamp: string | null;
  permalink: string | null;
  media_url: string | null;
}

const FIELDS = "id,caption,timestamp,permalink,media_url";

/**
 * The account's published reels, newest first, read from Graph with the account's token on the
 * server. The sandbox answers with URLs on GRAPH_URL's host (often 127.0.0.1), which the browser
 * may not reach: `sameServer` turns them into paths on the dashboard's own origin.
 */
export async function listPublishedPosts(
  graph: GraphClient,
  account: GraphAccount,
  opts: { sameServer: boolean; limit?: number; signal?: AbortSignal },
): Promise<PublishedPost[]> {
  const items = await graph.listMedia(account, FIELDS, opts.limit ?? 12, opts.signal);
  const local = (url: unknown) => {
    if (typeof url !== "string" || !url) return null;
    if (!opts.sameServer) return url;
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  };
  return items.map((item) => ({
    id: item.id,
    caption: typeof item.caption === "string" ? item.caption : "",
    timestamp: typeof item.timestamp === "string" ? item.timestamp : null,
    permalink: local(item.permalink),
    media_url: local(item.media_url),
  }));
}
