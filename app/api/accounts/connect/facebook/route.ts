import { otherMethods, withTenant } from "@/lib/web/http";
import { loginCallerOf } from "@/lib/accounts/meta-login/login-caller";
import { startFacebookLogin } from "@/lib/accounts/meta-login/connect-with-facebook";
import { facebookLoginDeps } from "@/lib/accounts/meta-login/meta-login-deps";

export const dynamic = "force-dynamic";

/** Leaves for Facebook's OAuth dialog; it sends the browser back to the callback. */
export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const dialog = await startFacebookLogin(facebookLoginDeps(services), loginCallerOf(request, tenantId));
  return new Response(null, { status: 302, headers: { location: dialog, "cache-control": "no-store" } });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
