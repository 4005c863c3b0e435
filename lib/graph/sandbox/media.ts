import { stat } from "node:fs/promises";
import { fileResponse } from "../../web/file-response";
import { escapeHtml } from "../../html";
import { authorize, graphJson, invalidParameter, pickFields, requestedFields, type GraphCall } from "./graph-request";
import { keys, readMediaRecord, videoPath, type MediaRecord } from "./store";
import type { SandboxDeps } from "./deps";
import { usernameOf, type SandboxAccount } from "./sandbox-accounts";

/** Published reels: `GET /{media-id}`, `GET /{ig-user-id}/media`, the kept video and its permalink page. */

const MEDIA_FIELDS = [
  "id",
  "caption",
  "comments_count",
  "is_comment_enabled",
  "is_shared_to_feed",
  "like_count",
  "media_product_type",
  "media_type",
  "media_url",
  "owner",
  "permalink",
  "shortcode",
  "thumbnail_url",
  "timestamp",
  "username",
] as const;

/** Graph writes times as 2024-05-01T12:00:00+0000. */
export function graphTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+0000");
}

function mediaValues(deps: SandboxDeps, baseUrl: string, media: MediaRecord): Record<string, unknown> {
  const account = deps.config.REEL_ACCOUNTS.find((a) => a.accountId === media.account_id);
  const extension = media.mime === "video/quicktime" ? "mov" : "mp4";
  return {
    id: media.id,
    caption: media.caption,
    comments_count: 0,
    is_comment_enabled: true,
    is_shared_to_feed: media.share_to_feed === "true",
    like_count: 0,
    media_product_type: "REELS",
    media_type: "VIDEO",
    media_url: `${baseUrl}/media-files/${media.id}.${extension}`,
    owner: { id: media.account_id },
    permalink: `${baseUrl}/reel/${media.shortcode}`,
    shortcode: media.shortcode,
    timestamp: graphTimestamp(media.timestamp),
    username: account ? usernameOf(account) : undefined,
  };
}

export function readMedia(call: GraphCall, media: MediaRecord): Response {
  authorize(call, media.account_id, media.id);
  const fields = requestedFields(call, MEDIA_FIELDS, "ShadowIGMedia");
  return graphJson(pickFields(mediaValues(call.deps, call.baseUrl, media), fields));
}

/** The account's published reels, newest first, with Graph's cursor paging. */
export async function listMedia(call: GraphCall, accountId: string): Promise<Response> {
  authorize(call, accountId, accountId);
  const fields = requestedFields(call, MEDIA_FIELDS, "ShadowIGMedia");
  const limit = call.params.limit ? Number(call.params.limit) : 25;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw invalidParameter("Param limit must be an integer from 1 to 100");
  const offset = call.params.after ? decodeCursor(call.params.after) : 0;
  const { redis } = call.deps;
  const ids = await redis.zrevrange(keys.accountPublished(accountId), offset, offset + limit);
  const page = ids.slice(0, limit);
  const records = await Promise.all(page.map((id) => readMediaRecord(redis, id)));
  const data = records
    .filter((m): m is MediaRecord => m !== undefined)
    .map((m) => pickFields(mediaValues(call.deps, call.baseUrl, m), fields));
  const body: Record<string, unknown> = { data };
  if (page.length > 0) {
    const after = encodeCursor(offset + page.length);
    const paging: Record<string, unknown> = { cursors: { before: encodeCursor(offset), after } };
    if (ids.length > limit) {
      // Like Graph, the next URL repeats the query, access_token included: keep it on the server.
      const next = new URL(`${call.baseUrl}/${call.version}/${accountId}/media`);
      for (const [key, value] of new URL(call.request.url).searchParams) next.searchParams.set(key, value);
      next.searchParams.set("after", after);
      paging.next = next.toString();
    }
    body.paging = paging;
  }
  return graphJson(body);
}

export async function readAccount(call: GraphCall, account: SandboxAccount): Promise<Response> {
  authorize(call, account.accountId, account.accountId);
  const fields = requestedFields(call, ["id", "username", "name", "media_count"], "ShadowIGUser");
  const mediaCount = fields.includes("media_count")
    ? await call.deps.redis.zcard(keys.accountPublished(account.accountId))
    : undefined;
  return graphJson(
    pickFields(
      { id: account.accountId, username: account.username, name: account.name, media_count: mediaCount },
      fields,
    ),
  );
}

function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString("base64url");
}

function decodeCursor(cursor: string): number {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString());
  if (!match) throw invalidParameter("Param after is not a valid cursor");
  return Number(match[1]);
}

/**
 * The kept video, like Instagram's CDN URL: public but unguessable, immutable, and seekable with
 * HTTP Range so a <video> element can jump around without downloading it all.
 */
export async function serveMediaFile(deps: SandboxDeps, request: Request, fileName: string): Promise<Response> {
  const match = /^(\d{6,20})\.(mp4|mov)$/.exec(fileName);
  const media = match?.[1] ? await readMediaRecord(deps.redis, match[1]) : undefined;
  const filePath = media ? videoPath(deps, media.file) : undefined;
  const info = filePath ? await stat(filePath).catch(() => undefined) : undefined;
  if (!media || !filePath || !info?.isFile())
    return new Response("Not found", { status: 404, headers: { "content-type": "text/plain" } });

  return fileResponse(request, {
    path: filePath,
    size: info.size,
    headers: {
      "content-type": media.mime,
      etag: `"${media.id}-${info.size}"`,
      "last-modified": new Date(media.timestamp).toUTCString(),
      "cache-control": "public, max-age=31536000, immutable",
    },
  });
}

/** The permalink: a small page that plays the reel, standing in for instagram.com/reel/{shortcode}. */
export async function renderPermalinkPage(deps: SandboxDeps, baseUrl: string, shortcode: string): Promise<Response> {
  const mediaId = /^[A-Za-z0-9_-]{6,20}$/.test(shortcode) ? await deps.redis.get(keys.shortcode(shortcode)) : null;
  const media = mediaId ? await readMediaRecord(deps.redis, mediaId) : undefined;
  if (!media) return new Response("Not found", { status: 404, headers: { "content-type": "text/plain" } });
  const values = mediaValues(deps, baseUrl, media);
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Reel ${escapeHtml(media.shortcode)} · Graph sandbox</title>
<style>body{margin:0;min-height:100vh;display:grid;place-items:center;background:#0b0b0f;color:#e7e7ea;font:15px/1.5 system-ui,sans-serif}
main{max-width:420px;width:100%;padding:16px}video{width:100%;max-height:80vh;border-radius:12px;background:#000}p{white-space:pre-wrap}</style></head>
<body><main><video src="${escapeHtml(String(values.media_url))}" controls playsinline loop autoplay muted></video>
<p>${escapeHtml(media.caption)}</p><small>${escapeHtml(String(values.username ?? ""))} · ${escapeHtml(String(values.timestamp))} · published to the Dispatch Graph sandbox</small></main></body></html>`;
  return new Response(html, {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "public, max-age=300" },
  });
}
