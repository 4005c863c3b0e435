import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import { refreshAccountToken, type TokenRefreshDeps } from "@/lib/accounts/token-refresh/refresh-account-token";
import { scheduleTokenRefresh, tokenRefreshKeys } from "@/lib/accounts/token-refresh/token-refresh-queue";
import { realRedisPerFile } from "./real-redis";

const redis = realRedisPerFile();
const GRAPH = "https://graph.instagram.test";
const HOUR_MS = 3_600_000;

/** Instagram's answer to a refresh of a token it no longer takes. */
const refused190 = () =>
  Response.json(
    { error: { message: "Error validating access token", type: "OAuthException", code: 190, fbtrace_id: "A1" } },
    { status: 400 },
  );

/** An Instagram-login account whose token expires within the hour: due for a refresh now. */
async function connectExpiring(accounts: ConnectedAccounts, accountId: string, token: string) {
  const account = await accounts.connect({
    tenantId: "acme",
    accountId,
    accessToken: token,
    login: "instagram",
    graphUrl: GRAPH,
    tokenExpiresAt: new Date(Date.now() + HOUR_MS).toISOString(),
  });
  if (account === "taken") throw new Error("taken");
  await scheduleTokenRefresh(redis(), accountId, Date.now());
  return account;
}

function deps(accounts: ConnectedAccounts, fetch: typeof globalThis.fetch): TokenRefreshDeps {
  return {
    redis: redis(),
    accounts,
    fetch,
    version: "v23.0",
    graphUrl: GRAPH,
    instagramGraphUrl: GRAPH,
    refreshBeforeMs: 10 * 86_400_000,
    retryMs: 60_000,
    log: () => {},
    now: Date.now,
  };
}

describe("a token refresh that loses to a reconnect", () => {
  it("keeps the account connected again while the old token's refresh was out on the schedule, when Instagram then refuses the old token", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001001";
    await connectExpiring(accounts, id, "old-token-secret");
    // The user reconnects through Instagram Login while the refresh of the old token is out.
    const outcome = await refreshAccountToken(
      deps(accounts, async () => {
        await connectExpiring(accounts, id, "new-token-secret");
        return refused190();
      }),
      id,
    );
    expect(outcome).toBe("needs_reconnect");
    expect(await accounts.findById(id)).toMatchObject({ status: "connected", accessToken: "new-token-secret" });
    expect(await redis().zscore(tokenRefreshKeys.due, id)).not.toBeNull();
  });

  it("takes an account whose refused token is still its own off the schedule", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const id = "17841400000001002";
    await connectExpiring(accounts, id, "refused-token-secret");
    expect(
      await refreshAccountToken(
        deps(accounts, async () => refused190()),
        id,
      ),
    ).toBe("needs_reconnect");
    expect(await accounts.findById(id)).toMatchObject({ status: "needs_reconnect" });
    expect(await redis().zscore(tokenRefreshKeys.due, id)).toBeNull();
  });

  it("keeps an account connected after the schedule read it as gone, and drops one that stays gone", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const gone = "17841400000001003";
    await scheduleTokenRefresh(redis(), gone, Date.now());
    expect(await refreshAccountToken(deps(accounts, fetch), gone)).toBe("dropped");
    expect(await redis().zscore(tokenRefreshKeys.due, gone)).toBeNull();

    // Read as disconnected; connected again (and scheduled) before the drop: it stays on the schedule.
    const back = "17841400000001004";
    await connectExpiring(accounts, back, "back-token-secret");
    await accounts.disconnect("acme", back);
    const racing = new ConnectedAccounts(redis(), randomBytes(32), []);
    const findById = racing.findById.bind(racing);
    racing.findById = async (accountId) => {
      const read = await findById(accountId);
      await connectExpiring(accounts, back, "reconnected-token-secret");
      return read;
    };
    expect(await refreshAccountToken(deps(racing, fetch), back)).toBe("dropped");
    expect(await redis().zscore(tokenRefreshKeys.due, back)).not.toBeNull();
  });
});
