import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConnectedAccounts, connectedAccountKeys } from "@/lib/accounts/connected-accounts";
import type { PublicationError } from "@/lib/reels/publication";
import { openToken, sealToken } from "@/lib/accounts/token-cipher";
import { realRedisPerFile } from "./real-redis";

const redis = realRedisPerFile();
const key = randomBytes(32);
const ACME = { tenantId: "acme", accountId: "17841400000000101", accessToken: "acme-token-secret" };
const GLOBEX = { tenantId: "globex", accountId: "17841400000000202", accessToken: "globex-token-secret" };
const refused: PublicationError = {
  code: 190,
  subcode: 463,
  message: "Error validating access token: Session has expired",
  fbtrace_id: null,
  classification: "reconnect-account",
  headline: "The account's access token is invalid, expired or revoked.",
  remedy: "Reconnect the account.",
  advice: "Reconnect the account.",
};

describe("sealed tokens", () => {
  it("open with the key and account they were sealed for, and with nothing else", () => {
    const sealed = sealToken(key, ACME.accountId, ACME.accessToken);
    expect(sealed).not.toContain(ACME.accessToken);
    expect(sealed).toMatch(/^v1\./);
    expect(sealToken(key, ACME.accountId, ACME.accessToken)).not.toBe(sealed); // a fresh IV each time
    expect(openToken(key, ACME.accountId, sealed)).toBe(ACME.accessToken);
    expect(openToken(key, GLOBEX.accountId, sealed)).toBeUndefined();
    expect(openToken(randomBytes(32), ACME.accountId, sealed)).toBeUndefined();
    expect(openToken(key, ACME.accountId, sealed.slice(0, -2))).toBeUndefined();
  });
});

describe("ConnectedAccounts", () => {
  it("seeds REEL_ACCOUNTS, keeps tenants apart, and stores no token in the clear", async () => {
    const accounts = new ConnectedAccounts(redis(), key, [ACME, GLOBEX]);
    expect((await accounts.list("acme")).map((a) => [a.accountId, a.status, a.accessToken, a.source])).toEqual([
      [ACME.accountId, "connected", ACME.accessToken, "config"],
    ]);
    expect(await accounts.find("globex", ACME.accountId)).toBeUndefined();
    expect(JSON.stringify(await redis().hgetall(connectedAccountKeys.record(ACME.accountId)))).not.toContain(
      ACME.accessToken,
    );
    expect(await accounts.connect({ tenantId: "globex", accountId: ACME.accountId, accessToken: "x" })).toBe("taken");
  });

  it("marks needs_reconnect only for the token that was refused; a reconnect clears it", async () => {
    const accounts = new ConnectedAccounts(redis(), key, []);
    const first = await accounts.connect({
      tenantId: "acme",
      accountId: "17841400000000303",
      accessToken: "one-secret",
      label: "Brand",
    });
    if (first === "taken") throw new Error("taken");
    const second = await accounts.connect({
      tenantId: "acme",
      accountId: "17841400000000303",
      accessToken: "two-secret",
    });
    if (second === "taken") throw new Error("taken");
    expect(second.tokenVersion).toBeGreaterThan(first.tokenVersion);
    expect(second.label).toBe("Brand");
    // A worker that used the first token is late: the account was reconnected since.
    expect(await accounts.markNeedsReconnect("17841400000000303", first.tokenVersion, refused)).toBe(false);
    expect(await accounts.markNeedsReconnect("17841400000000303", second.tokenVersion, refused)).toBe(true);
    expect(await accounts.find("acme", "17841400000000303")).toMatchObject({
      status: "needs_reconnect",
      error: { code: 190, subcode: 463 },
    });
    const third = await accounts.connect({
      tenantId: "acme",
      accountId: "17841400000000303",
      accessToken: "three-secret",
    });
    expect(third).toMatchObject({ status: "connected", error: null, accessToken: "three-secret" });
  });

  it("a refreshed token replaces the one it refreshes, sealed, only while that one is still the account's", async () => {
    const accounts = new ConnectedAccounts(redis(), key, []);
    const id = "17841400000000606";
    const connected = await accounts.connect({ tenantId: "acme", accountId: id, accessToken: "old-secret" });
    if (connected === "taken") throw new Error("taken");
    const expiresAt = "2027-01-25T00:00:00.000Z";
    expect(await accounts.storeRefreshedToken(id, connected.tokenVersion, "new-secret", expiresAt)).toBe(true);
    const refreshed = await accounts.findById(id);
    expect(refreshed).toMatchObject({ accessToken: "new-secret", tokenExpiresAt: expiresAt, status: "connected" });
    expect(refreshed!.tokenVersion).toBeGreaterThan(connected.tokenVersion);
    const record = JSON.stringify(await redis().hgetall(connectedAccountKeys.record(id)));
    expect(record).not.toContain("old-secret");
    expect(record).not.toContain("new-secret");
    // A refusal of the old token seen meanwhile marks nothing; a second refresh of the old one stores nothing.
    expect(await accounts.markNeedsReconnect(id, connected.tokenVersion, refused)).toBe(false);
    expect(await accounts.storeRefreshedToken(id, connected.tokenVersion, "late-secret", expiresAt)).toBe(false);
    expect((await accounts.findById(id))!.accessToken).toBe("new-secret");
    // An account that needs reconnecting keeps its state: only a reconnect moves it on.
    await accounts.markNeedsReconnect(id, refreshed!.tokenVersion, refused);
    expect(await accounts.storeRefreshedToken(id, refreshed!.tokenVersion, "after-mark", expiresAt)).toBe(false);
  });

  it("never gives a token version twice: what a worker learnt of a token from before a disconnect changes nothing of the account connected again, by any tenant", async () => {
    const accounts = new ConnectedAccounts(redis(), key, []);
    const id = "17841400000000707";
    const expiresAt = "2027-01-25T00:00:00.000Z";
    const before = await accounts.connect({ tenantId: "acme", accountId: id, accessToken: "acme-old-secret" });
    if (before === "taken") throw new Error("taken");
    // A refresh (or a publication) holds acme's token while acme disconnects and globex connects
    // the same Instagram account: the disconnect deleted the record, not the versions given.
    expect(await accounts.disconnect("acme", id)).toBe(true);
    const again = await accounts.connect({ tenantId: "globex", accountId: id, accessToken: "globex-secret" });
    if (again === "taken") throw new Error("taken");
    expect(again.tokenVersion).not.toBe(before.tokenVersion);
    expect(await accounts.storeRefreshedToken(id, before.tokenVersion, "acme-refreshed-secret", expiresAt)).toBe(false);
    expect(await accounts.markNeedsReconnect(id, before.tokenVersion, refused)).toBe(false);
    expect(await accounts.find("globex", id)).toMatchObject({
      accessToken: "globex-secret",
      status: "connected",
      tokenVersion: again.tokenVersion,
    });
    // The same after a refresh of the new token: each version once, whichever account or step drew it.
    expect(await accounts.storeRefreshedToken(id, again.tokenVersion, "globex-refreshed", expiresAt)).toBe(true);
    const other = await accounts.connect({ tenantId: "acme", accountId: "17841400000000808", accessToken: "x-secret" });
    if (other === "taken") throw new Error("taken");
    const versions = [before, again, await accounts.findById(id), other].map((a) => a!.tokenVersion);
    expect(new Set(versions).size).toBe(4);
  });

  it("a version stored before versions came from one counter is still moved past", async () => {
    // A record written when token_version counted the account's own connections (1, 2, …).
    const id = "17841400000000909";
    await redis().hset(connectedAccountKeys.record(id), { tenant_id: "acme", account_id: id, token_version: "2" });
    await redis().del(connectedAccountKeys.tokenVersions);
    const accounts = new ConnectedAccounts(redis(), key, []);
    const now = await accounts.connect({ tenantId: "acme", accountId: id, accessToken: "now-secret" });
    if (now === "taken") throw new Error("taken");
    expect(now.tokenVersion).toBeGreaterThan(2);
    expect(await accounts.markNeedsReconnect(id, 2, refused)).toBe(false);
  });

  it("a token sealed under another key reads as needs_reconnect, and a seeded one is sealed again from the environment", async () => {
    const seededId = "17841400000000404";
    await new ConnectedAccounts(redis(), randomBytes(32), [
      { tenantId: "acme", accountId: seededId, accessToken: "seed-secret" },
    ]).seeded();
    await new ConnectedAccounts(redis(), randomBytes(32), []).connect({
      tenantId: "acme",
      accountId: "17841400000000505",
      accessToken: "api-secret",
    });
    const accounts = new ConnectedAccounts(redis(), key, [
      { tenantId: "acme", accountId: seededId, accessToken: "seed-secret" },
    ]);
    expect(await accounts.find("acme", seededId)).toMatchObject({ status: "connected", accessToken: "seed-secret" });
    expect(await accounts.find("acme", "17841400000000505")).toMatchObject({
      status: "needs_reconnect",
      accessToken: undefined,
      error: { classification: "reconnect-account" },
    });
  });
});
