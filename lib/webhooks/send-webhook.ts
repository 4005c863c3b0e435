import { Webhook } from "standardwebhooks";
import { fetch, type Dispatcher } from "undici";
import { AddressNotAllowedError } from "../net/public-agent";

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  /** Why it failed, in words fit for the delivery log; never the address that answered. */
  error?: string;
  /** How long the endpoint asked to be left alone (its Retry-After), when it said so. */
  retryAfterMs?: number;
}

export interface SendRequest {
  url: string;
  secret: string;
  messageId: string;
  body: string;
  timestampMs: number;
  timeoutMs: number;
  /** Connects only where the address policy allows (createPublicAgent). */
  dispatcher: Dispatcher;
}

/**
 * One attempt of a delivery, signed as Standard Webhooks says: the signature covers
 * `id.timestamp.body` and the timestamp is this attempt's, so a receiver's replay window holds for
 * retries too. Redirects are not followed (a 3xx is a failure): the URL is what the tenant registered.
 */
export async function sendWebhook(request: SendRequest): Promise<SendResult> {
  const timestamp = new Date(Math.floor(request.timestampMs / 1000) * 1000);
  const headers = {
    "content-type": "application/json",
    "user-agent": "Dispatch-Webhooks/1",
    "webhook-id": request.messageId,
    "webhook-timestamp": String(timestamp.getTime() / 1000),
    "webhook-signature": new Webhook(request.secret).sign(request.messageId, timestamp, request.body),
  };
  try {
    const response = await fetch(request.url, {
      method: "POST",
      headers,
      body: request.body,
      redirect: "manual",
      dispatcher: request.dispatcher,
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    // The rest is not wanted; a cancel that fails means the stream is closed already.
    await response.body?.cancel().catch(() => {});
    const ok = response.status >= 200 && response.status < 300;
    if (ok) return { ok, statusCode: response.status };
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), request.timestampMs);
    return {
      ok,
      statusCode: response.status,
      error: `The endpoint answered HTTP ${response.status}`,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  } catch (error) {
    return { ok: false, statusCode: null, error: describeFailure(error, request.timeoutMs) };
  }
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3), in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

function describeFailure(error: unknown, timeoutMs: number): string {
  const chain: unknown[] = [];
  for (let e: unknown = error; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  const names = chain.map((e) => (e as { name?: string }).name);
  const codes = chain.map((e) => (e as { code?: string }).code);
  if (chain.some((e) => e instanceof AddressNotAllowedError) || codes.includes("EADDRNOTPUBLIC"))
    return "The URL does not lead to a public internet address";
  if (names.includes("TimeoutError") || codes.includes("UND_ERR_CONNECT_TIMEOUT"))
    return `No answer within ${timeoutMs / 1000} s`;
  if (codes.includes("ENOTFOUND") || codes.includes("EAI_AGAIN")) return "The host name does not resolve";
  if (codes.includes("ECONNREFUSED")) return "The connection was refused";
  if (codes.includes("ECONNRESET") || codes.includes("UND_ERR_SOCKET"))
    return "The connection was closed before an answer";
  if (codes.some((c) => typeof c === "string" && /CERT|TLS|SSL/.test(c))) return "The TLS certificate was not accepted";
  return "The request could not be sent";
}
