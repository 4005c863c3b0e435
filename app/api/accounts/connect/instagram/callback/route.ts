import { otherMethods, parseWith, withTenant } from "@/lib/web/http";
import { loginCallerOf } from "@/lib/accounts/meta-login/login-caller";
import { finishInstagramLogin, instagramCallbackSchema } from "@/lib/accounts/meta-login/connect-with-instagram";
import { instagramLoginDeps } from "@/lib/accounts/meta-login/instagram-login-deps";
import { loginErrorAnswer, loginOutcomeRedirect } from "@/lib/accounts/meta-login/login-outcome-redirect";

export const dynamic = "force-dynamic";

/** Where Instagram sends the browser back: `?code&state`, or `?error=access_denied&…`. */
export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const query = parseWith(instagramCallbackSchema, Object.fromEntries(new URL(request.url).searchParams));
  const caller = loginCallerOf(request, tenantId);
  const outcome = await finishInstagramLogin(instagramLoginDeps(services), caller, query);
  return loginOutcomeRedirect(services.redis, caller, outcome);
}, loginErrorAnswer);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
