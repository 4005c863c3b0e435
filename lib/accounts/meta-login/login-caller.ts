import { readCookie, SESSION_COOKIE } from "../../web/auth";
import type { LoginCaller } from "./login-callback";
import { bindingOf } from "./login-state";

/**
 * The caller a connection is bound to: the tenant and the credential that signed the request in
 * (the dashboard's session cookie, or an API key's header). The callback must come back with the
 * same one, so a link lured into another person's browser connects nothing.
 */
export function loginCallerOf(request: Request, tenantId: string): LoginCaller {
  const credential =
    readCookie(request.headers.get("cookie"), SESSION_COOKIE) ?? request.headers.get("authorization") ?? "";
  return loginCallerFor(tenantId, credential);
}

/** The caller of a dashboard page: its tenant and session cookie, as the login's routes saw them. */
export function loginCallerFor(tenantId: string, credential: string): LoginCaller {
  return { tenantId, binding: bindingOf(credential) };
}
