import { assertSameOrigin, clientAddress, readCookie, SESSION_COOKIE } from "@/lib/web/auth";
import { ApiError } from "@/lib/errors";
import { json, otherMethods, readJsonBody, withProblems, withTenant } from "@/lib/web/http";
import { getServices } from "@/lib/web/services";
import { sessionCookieHeader, signInSchema } from "@/lib/web/sessions";

export const dynamic = "force-dynamic";

/**
 * Secure unless the dashboard is served over plain http on this machine (localhost, 127.0.0.1,
 * ::1), where a browser would never send a Secure cookie back.
 */
function secureCookie(request: Request): boolean {
  const proto =
    request.headers.get("x-forwarded-proto")?.split(",")[0].trim() ?? new URL(request.url).protocol.replace(":", "");
  const host = new URL(`http://${request.headers.get("host") ?? new URL(request.url).host}`).hostname;
  return !(proto === "http" && ["localhost", "127.0.0.1", "[::1]"].includes(host));
}

/** Exchanges an API key for the dashboard's httpOnly session cookie; the key itself is not kept. */
export const POST = withProblems(async (request: Request) => {
  const { keys, sessions, throttle } = getServices();
  assertSameOrigin(request);
  const address = clientAddress(request);
  if (address) await throttle.check(address);
  const { api_key } = await readJsonBody(request, signInSchema);
  const tenantId = keys.tenantForKey(api_key);
  if (!tenantId) {
    if (address) await throttle.fail(address);
    throw new ApiError("unauthorized", "That API key is not valid.", [
      { path: "api_key", message: "This key is not valid." },
    ]);
  }
  const session = await sessions.create(tenantId);
  return json({ tenant_id: tenantId }, 200, {
    "set-cookie": sessionCookieHeader(session.value, session.maxAge, secureCookie(request)),
  });
});

export const GET = withTenant(async (_request: Request, { tenantId }) => json({ tenant_id: tenantId }));

/** Signs out: the session is deleted in Redis, so the cookie stops working wherever a copy of it is. */
export const DELETE = withProblems(async (request: Request) => {
  assertSameOrigin(request);
  const value = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
  if (value) await getServices().sessions.revoke(value);
  return new Response(null, {
    status: 204,
    headers: { "cache-control": "no-store", "set-cookie": sessionCookieHeader("", 0, secureCookie(request)) },
  });
});

export const { PUT, PATCH, OPTIONS } = otherMethods({ GET, POST, DELETE });
