import { z } from "zod";
import { ApiError } from "../errors";
import type { AccountView } from "./account";
import { readAccountView, type AccountDeps } from "./account-view";
import type { GraphClient, GraphUser } from "../graph/client";
import { GraphError, GraphPaused, GraphTransportError } from "../graph/error";
import { releaseWaitingPublications } from "../reels/release-waiting-publications";

export const connectAccountSchema = z.strictObject({
  account_id: z
    .string({ error: "Account id is required" })
    .regex(/^[0-9A-Za-z_-]{1,64}$/, "Account id is the Instagram account's id (digits)"),
  access_token: z
    .string({ error: "Access token is required" })
    .min(1, "Access token is required")
    .max(4096, "Access token is at most 4096 characters"),
  label: z.string().trim().max(100, "Label is at most 100 characters").optional(),
});
export type ConnectAccountInput = z.infer<typeof connectAccountSchema>;

export type { AccountDeps } from "./account-view";

/** Graph is asked while a client waits: a slow Graph costs it at most this long. */
const GRAPH_TIMEOUT_MS = 5000;

/**
 * Connects an account for the tenant, or reconnects it with a new token: the token is checked
 * against Graph first (`GET /{account_id}?fields=id,username` with it), then stored sealed. The
 * account's publications that waited for a reconnect go on.
 */
export async function connectAccount(
  deps: AccountDeps,
  tenantId: string,
  input: ConnectAccountInput,
  signal?: AbortSignal,
): Promise<AccountView> {
  const now = (deps.now ?? Date.now)();
  const user = await checkToken(deps.graphs.default, input, signal);
  const account = await deps.accounts.connect({
    tenantId,
    accountId: input.account_id,
    accessToken: input.access_token,
    label: input.label,
    username: user.username ?? null,
  });
  if (account === "taken") throw new ApiError("conflict", "Another tenant has connected this account.");
  if (user.username) await deps.accounts.rememberUsername(input.account_id, user.username);
  await releaseWaitingPublications(deps.redis, input.account_id, now);
  return readAccountView(deps, account, signal);
}

async function checkToken(graph: GraphClient, input: ConnectAccountInput, signal?: AbortSignal): Promise<GraphUser> {
  const timeout = AbortSignal.timeout(GRAPH_TIMEOUT_MS);
  let user: GraphUser;
  try {
    user = await graph.readAccount(
      { accountId: input.account_id, accessToken: input.access_token },
      "id,username",
      signal ? AbortSignal.any([signal, timeout]) : timeout,
    );
  } catch (error) {
    if (error instanceof GraphError) {
      const code = `${error.code}${error.subcode ? `/${error.subcode}` : ""}`;
      throw new ApiError("validation", "Graph refused the access token for this account.", [
        { path: "access_token", message: `Graph refused it: ${error.message} (${code})` },
      ]);
    }
    if (error instanceof GraphPaused) {
      const seconds = Math.max(1, Math.ceil((error.until - Date.now()) / 1000));
      throw new ApiError(
        "unavailable",
        `Graph asked to wait before the next call (usage at its limit) until ${new Date(error.until).toISOString()}; nothing was stored. Try again then.`,
        undefined,
        {
          "Retry-After": String(seconds),
        },
      );
    }
    if (error instanceof GraphTransportError || timeout.aborted) {
      throw new ApiError(
        "unavailable",
        "Graph could not be reached to check the token; nothing was stored. Try again shortly.",
        undefined,
        { "Retry-After": "5" },
      );
    }
    throw error;
  }
  if (user.id !== input.account_id) {
    throw new ApiError("validation", "The access token belongs to another account.", [
      { path: "access_token", message: `Graph says this token is account ${user.id}'s` },
    ]);
  }
  return user;
}

/** Disconnects the tenant's account; its token is deleted. */
export async function disconnectAccount(
  deps: Pick<AccountDeps, "accounts">,
  tenantId: string,
  accountId: string,
): Promise<void> {
  if (!(await deps.accounts.disconnect(tenantId, accountId)))
    throw new ApiError("not-found", "No such account for this tenant.");
}
