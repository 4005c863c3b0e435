import { otherMethods, withTenant } from "@/lib/web/http";
import { loginCallerOf } from "@/lib/accounts/meta-login/login-caller";
import { startInstagramLogin } from "@/lib/accounts/meta-login/connect-with-instagram";
import { instagramLoginDeps } from "@/lib/accounts/meta-login/instagram-login-deps";

export const dynamic = "force-dynamic";

/** Leaves for Instagram's authorize dialog; it sends the browser back to the callback. */
export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const dialog = await startInstagramLogin(instagramLoginDeps(services), loginCallerOf(request, tenantId));
  return new Response(null, { status: 302, headers: { location: dialog, "cache-control": "no-store" } });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
