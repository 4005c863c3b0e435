import { randomBytes, randomUUID } from "node:crypto";
import type { Producer } from "kafkajs";
import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/errors";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import { publicationKeys } from "@/lib/reels/publication-record";
import { readPublication } from "@/lib/reels/read-publication";
import { publicationInputSchema } from "@/lib/reels/publication-input";
import { submitPublication, type SubmitPublicationDeps } from "@/lib/reels/submit-publication";
import { TOPICS } from "@/lib/topics";
import { readUpload, recordUpload, UNCLAIMED_UPLOAD_TTL_S, uploadKeys } from "@/lib/uploads/upload-store";
import { realRedisPerFile } from "./real-redis";

const ACME = { tenantId: "acme", accountId: "17841400000000101", accessToken: "acme-token" };
const GLOBEX = { tenantId: "globex", accountId: "17841400000000202", accessToken: "globex-token" };
const NOW = new Date("2030-01-01T00:00:00Z");

const redis = realRedisPerFile();
let accounts: ConnectedAccounts | undefined;
/** The accounts seeded over the real Redis, as REEL_ACCOUNTS seeds them in production. */
const connected = () => (accounts ??= new ConnectedAccounts(redis(), randomBytes(32), [ACME, GLOBEX]));

function deps(
  send: (record: { topic: string; acks?: number; messages: { key: string; value: string }[] }) => Promise<unknown>,
): SubmitPublicationDeps {
  return {
    redis: redis(),
    producer: async () => ({ send }) as unknown as Producer,
    connected: connected(),
    now: () => NOW,
  };
}

const input = (over: Record<string, unknown> = {}) =>
  publicationInputSchema.parse({ account_id: ACME.accountId, video_url: "https://videos.test/a.mp4", ...over });
const apiError = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e as ApiError,
  );

describe("publicationInputSchema", () => {
  it.each<[string, Record<string, unknown>, string]>([
    ["an unknown field", { account_id: "1", video_url: "https://v.test/a.mp4", extra: 1 }, "extra"],
    ["a URL that is not http(s)", { account_id: "1", video_url: "ftp://v.test/a.mp4" }, "video_url"],
    ["a URL over 2048 characters", { account_id: "1", video_url: `https://v.test/${"a".repeat(2040)}` }, "video_url"],
    [
      "a caption over 2200 characters",
      { account_id: "1", video_url: "https://v.test/a.mp4", caption: "x".repeat(2201) },
      "caption",
    ],
    [
      "publish_at without a time zone",
      { account_id: "1", video_url: "https://v.test/a.mp4", publish_at: "2030-01-01T10:00:00" },
      "publish_at",
    ],
    [
      "share_to_feed as a string",
      { account_id: "1", video_url: "https://v.test/a.mp4", share_to_feed: "yes" },
      "share_to_feed",
    ],
  ])("refuses %s", (_name, body, path) => {
    const result = publicationInputSchema.safeParse(body);
    expect(result.success).toBe(false);
    expect(
      result.error?.issues.some((i) => i.path.includes(path) || ("keys" in i && (i.keys as string[]).includes(path))),
    ).toBe(true);
  });

  it("shares to the feed unless told otherwise", () => {
    expect(publicationInputSchema.parse({ account_id: "1", video_url: "https://v.test/a.mp4" }).share_to_feed).toBe(
      true,
    );
  });
});

describe("submitPublication", () => {
  it("records the publication and produces it keyed by account with acks -1, then makes it visible", async () => {
    const sent: { topic: string; acks?: number; messages: { key: string; value: string }[] }[] = [];
    const result = await submitPublication(
      deps(async (r) => sent.push(r)),
      "acme",
      input({ caption: "hello" }),
    );
    expect(result.created).toBe(true);
    const id = result.publication.publication_id;
    expect(result.publication.status).toBe("QUEUED");
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ topic: TOPICS.reels.name, acks: -1 });
    expect(sent[0].messages[0].key).toBe(ACME.accountId);
    expect(JSON.parse(sent[0].messages[0].value)).toEqual({
      publication_id: id,
      tenant_id: "acme",
      account_id: ACME.accountId,
    });
    const stored = await readPublication(redis(), "acme", id);
    expect(stored).toMatchObject({
      status: "QUEUED",
      caption: "hello",
      share_to_feed: true,
      publish_at: null,
      container_id: null,
      polls: [],
      error: null,
    });
    expect(stored?.steps.map((s) => s.step)).toEqual(["queued"]);
    expect(await redis().zscore(publicationKeys.tenantIndex("acme"), id)).toBe(String(NOW.getTime()));
    expect(await readPublication(redis(), "globex", id)).toBeUndefined();
  });

  it("answers 503 with Retry-After and records nothing when the broker does not acknowledge", async () => {
    const before = await redis().keys(publicationKeys.state("*"));
    const error = await apiError(
      submitPublication(
        deps(async () => {
          throw new Error("broker down");
        }),
        "acme",
        input(),
        { idempotencyKey: "try-once" },
      ),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error?.status).toBe(503);
    expect(error?.headers["Retry-After"]).toBe("2");
    expect(await redis().keys(publicationKeys.state("*"))).toEqual(before);
    // the key was released with the record: the same key works once the broker is back
    const again = await submitPublication(
      deps(async () => []),
      "acme",
      input(),
      { idempotencyKey: "try-once" },
    );
    expect(again.created).toBe(true);
  });

  it("gives the upload back when the broker does not acknowledge, so the retry the 503 invites can use it", async () => {
    const uploadId = randomUUID();
    const record = {
      upload_id: uploadId,
      tenant_id: "acme",
      size: 1000,
      mime: "video/mp4" as const,
      file: `acme/${uploadId}.mp4`,
      created_at: NOW.toISOString(),
    };
    expect((await recordUpload(redis(), record, 1_000_000)).recorded).toBe(true);
    const withUpload = input({ video_url: undefined, upload_id: uploadId });
    const refused = await apiError(
      submitPublication(
        deps(async () => Promise.reject(new Error("broker down"))),
        "acme",
        withUpload,
        { idempotencyKey: "upload-once" },
      ),
    );
    expect(refused?.status).toBe(503);
    expect(await readUpload(redis(), uploadId)).toMatchObject({ publication_id: "" });
    expect(await redis().ttl(uploadKeys.upload(uploadId))).toBeLessThanOrEqual(UNCLAIMED_UPLOAD_TTL_S);

    const again = await submitPublication(
      deps(async () => []),
      "acme",
      withUpload,
      { idempotencyKey: "upload-once" },
    );
    expect(again.created).toBe(true);
    expect(await readUpload(redis(), uploadId)).toMatchObject({ publication_id: again.publication.publication_id });
  });

  it("answers 404 for another tenant's account, like an unknown one", async () => {
    for (const accountId of [GLOBEX.accountId, "17841499999999999"]) {
      const error = await apiError(
        submitPublication(
          deps(async () => []),
          "acme",
          input({ account_id: accountId }),
        ),
      );
      expect(error?.status).toBe(404);
    }
  });

  it("schedules a future publish_at and refuses past or too distant ones", async () => {
    const publishAt = new Date(NOW.getTime() + 3600_000).toISOString();
    const { publication } = await submitPublication(
      deps(async () => []),
      "acme",
      input({ publish_at: publishAt }),
    );
    expect(publication).toMatchObject({ status: "SCHEDULED", publish_at: publishAt });
    expect(await redis().zscore(publicationKeys.scheduled, publication.publication_id)).toBe(
      String(Date.parse(publishAt)),
    );

    for (const at of [
      new Date(NOW.getTime() - 1000).toISOString(),
      new Date(NOW.getTime() + 76 * 86400_000).toISOString(),
    ]) {
      const error = await apiError(
        submitPublication(
          deps(async () => []),
          "acme",
          input({ publish_at: at }),
        ),
      );
      expect(error?.status).toBe(422);
      expect(error?.errors?.[0].path).toBe("publish_at");
    }
  });

  it("answers the same publication for the same Idempotency-Key and body, 409 for another body", async () => {
    let sends = 0;
    const d = deps(async () => ++sends);
    const first = await submitPublication(d, "acme", input({ caption: "once" }), { idempotencyKey: "order-42" });
    const second = await submitPublication(d, "acme", input({ caption: "once" }), { idempotencyKey: "order-42" });
    expect(second.created).toBe(false);
    expect(second.publication.publication_id).toBe(first.publication.publication_id);
    expect(sends).toBe(1);
    const conflict = await apiError(
      submitPublication(d, "acme", input({ caption: "twice" }), { idempotencyKey: "order-42" }),
    );
    expect(conflict?.status).toBe(409);
    // keys are per tenant
    const globex = await submitPublication(d, "globex", input({ account_id: GLOBEX.accountId, caption: "once" }), {
      idempotencyKey: "order-42",
    });
    expect(globex.created).toBe(true);
  });
});
