import { otherMethods, withTenant } from "@/lib/web/http";
import { loginCallerOf } from "@/lib/accounts/meta-login/login-caller";
import { finishFacebookChoice } from "@/lib/accounts/meta-login/connect-with-facebook";
import { readAccountChoiceForm } from "@/lib/accounts/meta-login/account-choice-form";
import { facebookLoginDeps } from "@/lib/accounts/meta-login/meta-login-deps";
import { loginErrorAnswer, loginOutcomeRedirect } from "@/lib/accounts/meta-login/login-outcome-redirect";

export const dynamic = "force-dynamic";

/** The picker's form: connects the Instagram accounts ticked, once. */
export const POST = withTenant(async (request: Request, { services, tenantId }) => {
  const form = await readAccountChoiceForm(request);
  const caller = loginCallerOf(request, tenantId);
  const outcome = await finishFacebookChoice(facebookLoginDeps(services), caller, form);
  return loginOutcomeRedirect(services.redis, caller, outcome);
}, loginErrorAnswer);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST });
