import { otherMethods, withTenant } from "@/lib/web/http";
import { loginCallerOf } from "@/lib/accounts/meta-login/login-caller";
import { finishFacebookChoice } from "@/lib/accounts/meta-login/connect-with-facebook";
import { readAccountChoiceForm } from "@/lib/accounts/meta-login/account-choice-form";
import { facebookLoginDeps } from "@/lib/accounts/meta-login/meta-login-deps";
import { loginErrorAnswer, loginOutcomeResponse } from "@/lib/accounts/meta-login/login-outcome-page";

export const dynamic = "force-dynamic";

/** The picker's form: connects the Instagram accounts ticked, once. */
export const POST = withTenant(async (request: Request, { services, tenantId }) => {
  const form = await readAccountChoiceForm(request);
  const outcome = await finishFacebookChoice(facebookLoginDeps(services), loginCallerOf(request, tenantId), form);
  return loginOutcomeResponse(outcome);
}, loginErrorAnswer);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST });
