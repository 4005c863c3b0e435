import { randomBytes } from "node:crypto";
import type { Producer } from "kafkajs";
import { describe, expect, it } from "vitest";
import { ConnectedAccounts } from "@/lib/accounts/connected-accounts";
import {
  appendEvent,
  appendEventReadingRecord,
  parsePublicationRecord,
  publicationKeys,
  readPublicationRecord,
  type PublicationHash,
} from "@/lib/reels/publication-record";
import { publicationInputSchema } from "@/lib/reels/publication-input";
import { readPublication, readPublicationAsOf } from "@/lib/reels/read-publication";
import { retryPublication } from "@/lib/reels/retry-publication";
import { submitPublication } from "@/lib/reels/submit-publication";
import { realRedisPerFile } from "./real-redis";

/** The publication hash as its writers leave it parses with the one schema, the claim script's write included. */
const redis = realRedisPerFile();
const ACCOUNT = { tenantId: "record-t", accountId: "17841400000000777", accessToken: "record-token" };
let accounts: ConnectedAccounts | undefined;
const connected = () => (accounts ??= new ConnectedAccounts(redis(), randomBytes(32), [ACCOUNT]));
const producer = async () => ({ send: async () => [] }) as unknown as Producer;
const submit = (over: Record<string, unknown> = {}) =>
  submitPublication(
    { redis: redis(), producer, connected: connected() },
    ACCOUNT.tenantId,
    publicationInputSchema.parse({ account_id: ACCOUNT.accountId, video_url: "https://videos.test/r.mp4", ...over }),
  ).then((r) => r.publication.publication_id);

describe("the publication record", () => {
  it("parses what submit-publication's claim script writes, with the hash's strings as values", async () => {
    const id = await submit({ caption: "typed", share_to_feed: false });
    expect(await readPublicationRecord(redis(), id)).toMatchObject({
      publication_id: id,
      tenant_id: ACCOUNT.tenantId,
      status: "QUEUED",
      caption: "typed",
      share_to_feed: false,
      seq: 1,
      poll_count: 0,
      submitting: false,
      upload_done: false,
      container_id: "",
      error: null,
      warnings: [],
    });
  });

  it("keeps the reel parameters in Graph's form and answers them with the publication; absent ones as null or empty", async () => {
    const parameters = {
      cover_url: "https://cdn.test/cover.jpg",
      thumb_offset: 0,
      audio_name: "Morning run",
      collaborators: ["ana.runs"],
      location_id: "7640348500",
      user_tags: [{ username: "carla", x: 0.5, y: 0.25 }],
      trial_params: { graduation_strategy: "MANUAL" },
    };
    const id = await submit(parameters);
    expect(await redis().hgetall(publicationKeys.state(id))).toMatchObject({
      thumb_offset: "0",
      collaborators: '["ana.runs"]',
      user_tags: '[{"username":"carla","x":0.5,"y":0.25}]',
      trial_params: '{"graduation_strategy":"MANUAL"}',
    });
    expect(await readPublication(redis(), ACCOUNT.tenantId, id)).toMatchObject(parameters);
    expect(await readPublication(redis(), ACCOUNT.tenantId, await submit())).toMatchObject({
      cover_url: null,
      thumb_offset: null,
      audio_name: null,
      collaborators: [],
      location_id: null,
      user_tags: [],
      trial_params: null,
    });
  });

  it("reads an error recorded before headline and remedy existed with its message and advice in their place", async () => {
    const id = await submit();
    const old = {
      code: 100,
      subcode: null,
      message: "Invalid parameter",
      fbtrace_id: "T",
      classification: "fix-input",
      advice: "Fix the request.",
    };
    await redis().hset(publicationKeys.state(id), {
      status: "FAILED",
      error: JSON.stringify(old),
      warnings: JSON.stringify(["moov at the end"]),
    } satisfies PublicationHash);
    expect((await readPublication(redis(), ACCOUNT.tenantId, id))?.error).toEqual({
      ...old,
      headline: "Invalid parameter",
      remedy: "Fix the request.",
    });
    expect((await readPublicationRecord(redis(), id))?.warnings).toEqual(["moov at the end"]);
  });

  it("reads back the publication as a write left it, whatever a client wrote after it (a retry)", async () => {
    const id = await submit();
    const write = (status: "PROCESSING" | "FAILED", step: string) =>
      ({ status, body: { kind: "step", step: { at: new Date().toISOString(), step, detail: step } } }) as const;
    await appendEvent(redis(), id, write("PROCESSING", "created"));
    const failed = await appendEventReadingRecord(redis(), id, write("FAILED", "failed"));
    const asGetShowedIt = await readPublication(redis(), ACCOUNT.tenantId, id);
    expect(failed).toMatchObject({ status: "FAILED", seq: 3 });
    await retryPublication({ redis: redis(), producer }, ACCOUNT.tenantId, id);
    expect((await readPublication(redis(), ACCOUNT.tenantId, id))?.status).toBe("QUEUED");
    expect(await readPublicationAsOf(redis(), failed!)).toEqual(asGetShowedIt);
    // A write refused (nothing is written over FAILED but a retry) reads back nothing.
    await appendEvent(redis(), id, write("FAILED", "failed"));
    expect(await appendEventReadingRecord(redis(), id, write("PROCESSING", "late"))).toBeUndefined();
  });

  it("is no record without an id or with a status it does not know", () => {
    expect(parsePublicationRecord({})).toBeUndefined();
    expect(
      parsePublicationRecord({
        publication_id: "p",
        tenant_id: "t",
        account_id: "a",
        status: "LOST",
        created_at: "2030-01-01T00:00:00Z",
      }),
    ).toBeUndefined();
    expect(
      parsePublicationRecord({
        publication_id: "p",
        tenant_id: "t",
        account_id: "a",
        status: "SCHEDULED",
        created_at: "2030-01-01T00:00:00Z",
        scheduled_reason: "quota",
      }),
    ).toMatchObject({
      status: "SCHEDULED",
      scheduled_reason: "quota",
    });
    // @ts-expect-error a misspelt field does not compile
    const misspelt: PublicationHash = { containr_id: "1" };
    expect(misspelt).toBeDefined();
  });
});
