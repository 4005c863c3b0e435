import { GraphError } from "../error";
import type { GraphCall } from "./graph-request";

/**
 * Graph refuses a call its token's person did not allow, with code 10 (Meta's error table: 10 and
 * 200–299 are "permission missing"; a client reconnects the account with the right scopes).
 * Meta's documentation gives no body for these; what it answers, as seen in the open:
 *   - insights without the insights permission: "(#10) Application does not have permission for
 *     this action" (airbytehq/airbyte#32245, its Instagram MediaInsights stream);
 *   - publishing without instagram_content_publish (Facebook Login): {"error":{"message":"(#10)
 *     Requires instagram_content_publish permission to manage the object","type":"OAuthException",
 *     "code":10}} (gitroomhq/postiz-app#1914). Instagram Login's words are not on record: the same,
 *     naming instagram_business_content_publish, is assumed.
 * The HTTP status is not documented either (403 has been seen for #200, arsduo/koala#693): 400
 * here, as for Graph's other error objects; clients decide by the code.
 * A token no dialog made (REEL_ACCOUNTS, the control surface) carries no scopes and may do everything.
 */

const NEEDED = {
  insights: {
    instagram: ["instagram_business_manage_insights"],
    facebook: ["instagram_manage_insights", "pages_read_engagement"],
  },
  publish: {
    instagram: ["instagram_business_content_publish"],
    facebook: ["instagram_content_publish"],
  },
} as const;

export type GraphAction = keyof typeof NEEDED;

/** Throws Meta's code 10 when the caller's token (resolved by requireValidToken) lacks a permission the action needs. */
export function requirePermission(call: GraphCall, action: GraphAction): void {
  const token = call.token;
  if (!token?.scopes || !token.login) return;
  const missing = NEEDED[action][token.login].find((scope) => !token.scopes!.includes(scope));
  if (!missing) return;
  throw new GraphError({
    code: 10,
    message:
      action === "insights"
        ? "(#10) Application does not have permission for this action"
        : `(#10) Requires ${missing} permission to manage the object`,
    isTransient: false,
  });
}
