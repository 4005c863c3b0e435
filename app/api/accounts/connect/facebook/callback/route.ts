import { otherMethods, parseWith, withTenant } from "@/lib/web/http";
import { loginCallerOf } from "@/lib/accounts/meta-login/login-caller";
import { finishFacebookLogin } from "@/lib/accounts/meta-login/connect-with-facebook";
import { metaCallbackSchema } from "@/lib/accounts/meta-login/login-callback";
import { facebookLoginDeps } from "@/lib/accounts/meta-login/meta-login-deps";
import { loginErrorAnswer, loginOutcomeRedirect } from "@/lib/accounts/meta-login/login-outcome-redirect";

export const dynamic = "force-dynamic";

/** Where Facebook sends the browser back: `?code&state`, or `?error=access_denied&…`; several accounts: to the picker. */
export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const query = parseWith(metaCallbackSchema, Object.fromEntries(new URL(request.url).searchParams));
  const caller = loginCallerOf(request, tenantId);
  const outcome = await finishFacebookLogin(facebookLoginDeps(services), caller, query);
  return loginOutcomeRedirect(services.redis, caller, outcome);
}, loginErrorAnswer);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
