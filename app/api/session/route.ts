import { cookies } from "next/headers";
import { z } from "zod";
import { authenticate, SESSION_COOKIE } from "@/lib/auth";
import { ApiError } from "@/lib/errors";
import { json, readJsonBody, withProblems } from "@/lib/http";
import { getServices } from "@/lib/services";

export const dynamic = "force-dynamic";

const signInSchema = z.strictObject({
  api_key: z.string().trim().min(1, "Enter your API key.").max(512, "That is longer than any API key."),
});

// Secure cookies only travel over https; a plain-http localhost install would never get one back.
const isHttps = (request: Request) =>
  new URL(request.url).protocol === "https:" || request.headers.get("x-forwarded-proto")?.split(",")[0].trim() === "https";

/** Exchanges an API key for the dashboard's httpOnly session cookie; the key itself is not kept. */
export const POST = withProblems(async (request: Request) => {
  const { keys } = getServices();
  const { api_key } = await readJsonBody(request, signInSchema);
  const tenantId = keys.tenantForKey(api_key);
  if (!tenantId) throw new ApiError("unauthorized", "That API key is not valid.", [{ path: "api_key", message: "This key is not valid." }]);
  const session = keys.issueSession(tenantId);
  (await cookies()).set(SESSION_COOKIE, session.value, {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure: isHttps(request),
    maxAge: session.maxAge,
  });
  return json({ tenant_id: tenantId });
});

export const GET = withProblems(async (request: Request) => {
  const { tenantId } = authenticate(request, getServices().keys);
  return json({ tenant_id: tenantId });
});

export const DELETE = withProblems(async (request: Request) => {
  (await cookies()).set(SESSION_COOKIE, "", { httpOnly: true, sameSite: "lax", path: "/", secure: isHttps(request), maxAge: 0 });
  return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
});
