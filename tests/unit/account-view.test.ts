import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readAccountView } from "@/lib/accounts/account-view";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import type { GraphClient } from "@/lib/graph/client";
import { GraphError } from "@/lib/graph/error";
import { webhookKeys } from "@/lib/webhooks/keys";
import { createWebhook } from "@/lib/webhooks/store";
import { realRedisPerFile } from "./real-redis";

const redis = realRedisPerFile();

describe("an account's view", () => {
  it("marks the account needs_reconnect when Graph refuses its token, and sends account.needs_reconnect once", async () => {
    const accounts = new ConnectedAccounts(redis(), randomBytes(32), []);
    const accountId = "17841400000003001";
    const connected = await accounts.connect({ tenantId: "viewco", accountId, accessToken: "revoked-token-secret" });
    if (connected === "taken") throw new Error("taken");
    await createWebhook(
      redis(),
      "viewco",
      { url: "https://hooks.example.com/accounts", events: ["account.needs_reconnect"] },
      10,
      new Date(Date.now() - 60_000),
    );
    const refused = new GraphError({
      message: "Error validating access token: The user has not authorized application.",
      code: 190,
      subcode: 458,
      fbtraceId: "TRACE-V",
    });
    const graph = {
      readAccount: async () => Promise.reject(refused),
      readPublishingLimit: async () => Promise.reject(refused),
    } as unknown as GraphClient;
    const deps = { redis: redis(), accounts, graphs: { default: graph, forAccount: () => graph }, sandbox: false };

    const view = await readAccountView(deps, connected);
    expect(view).toMatchObject({ status: "needs_reconnect", error: { code: 190, subcode: 458 } });
    // Read again: already marked, nothing more is sent.
    await readAccountView(deps, (await accounts.findById(accountId))!);

    const due = await redis().zrange(webhookKeys.due("viewco"), 0, -1);
    const bodies = await Promise.all(
      due.map(async (d) => JSON.parse((await redis().hget(webhookKeys.delivery(d), "body"))!)),
    );
    expect(bodies.map((b) => [b.type, b.data.account_id, b.data.status, b.data.error?.code])).toEqual([
      ["account.needs_reconnect", accountId, "needs_reconnect", 190],
    ]);
  });
});
