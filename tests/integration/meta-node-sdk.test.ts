import { randomInt } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import bizSdk from "facebook-nodejs-business-sdk";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parseConfig } from "@/lib/config";
import { createRedis, type Redis } from "@/lib/redis";
import { settleSandboxProcessing, type SandboxDeps } from "@/lib/graph/sandbox";
import { waitFor } from "../helpers";
import { serveSamples, serveSandbox, type SandboxServer } from "../sandbox-server";

/**
 * Meta's own Node SDK (facebook-nodejs-business-sdk) publishes a reel through the sandbox,
 * unchanged: IGUser.createMedia → the container's status → IGUser.createMediaPublish. The SDK has
 * no setting for Graph's host (FacebookAdsApi.GRAPH is a constant); it takes a whole URL instead
 * of a path in the documented POST path override of its edge methods, and in FacebookAdsApi#call
 * (how its own cursors follow `paging.next`), so the sandbox's URLs go there.
 */

const { FacebookAdsApi, IGUser, IGMedia } = bizSdk;
const DATA_DIR = path.resolve(__dirname, "../../.test-data/meta-node-sdk");
const VERSION = "v21.0";
const accountId = `1784${randomInt(1e9, 1e10)}`;
const token = `sdk-token-${accountId}-secret`;

let redis: Redis;
let deps: SandboxDeps;
let graph: SandboxServer;
let samples: SandboxServer;

beforeAll(async () => {
  await rm(DATA_DIR, { recursive: true, force: true });
  redis = createRedis(inject("redisUrl"));
  const config = parseConfig({
    REDIS_URL: inject("redisUrl"),
    KAFKA_BROKERS: "127.0.0.1:1",
    API_KEYS: "sdk:sdk-key-0123456789abcdef",
    REEL_ACCOUNTS: `sdk:${accountId}:${token}`,
    SANDBOX_PROCESSING_MS: "200",
    ALLOW_PRIVATE_URLS: "true",
    DATA_DIR,
  });
  deps = { redis, config, log: () => {}, now: () => Date.now() };
  graph = await serveSandbox(deps);
  samples = await serveSamples();
});

afterAll(async () => {
  await settleSandboxProcessing(deps);
  await graph?.close();
  await samples?.close();
  redis?.disconnect();
  await rm(DATA_DIR, { recursive: true, force: true });
});

/** Where the SDK would call graph.facebook.com/{version}/{path}: the same path on the sandbox. */
const sandboxUrl = (pathAndQuery: string) => `${graph.url}/graph/${VERSION}/${pathAndQuery}`;

describe("Meta's Node SDK against the sandbox", () => {
  it("publishes a reel through the container flow: createMedia, the container's status, createMediaPublish", async () => {
    // No crash reporter: it would send the SDK's errors to Meta.
    const api = new FacebookAdsApi(token, "en_US", false);
    const user = new IGUser(accountId, {}, null, api);
    const caption = `Published by Meta's SDK ${randomInt(1e6)}`;

    const container = await user.createMedia(
      [],
      {
        media_type: "REELS",
        video_url: `${samples.url}/samples/reel-valid.mp4`,
        caption,
        share_to_feed: true,
        collaborators: ["ana.runs"],
        trial_params: { graduation_strategy: "MANUAL" },
        access_token: token,
      },
      sandboxUrl(`${accountId}/media`),
    );
    expect(container).toBeInstanceOf(IGMedia);
    expect(container.id).toMatch(/^\d{17}$/);

    const status = await waitFor(
      async () => {
        const read = (await api.call(
          "GET",
          sandboxUrl(`${container.id}?fields=status_code,status&access_token=${token}`),
        )) as { status_code: string; status: string };
        return read.status_code === "IN_PROGRESS" ? undefined : read;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `container ${container.id} to finish processing` },
    );
    expect(status.status_code).toBe("FINISHED");

    const media = await user.createMediaPublish(
      [],
      { creation_id: container.id, access_token: token },
      sandboxUrl(`${accountId}/media_publish`),
    );
    expect(media).toBeInstanceOf(IGMedia);
    expect(media.id).toMatch(/^\d{17}$/);

    const published = (await api.call(
      "GET",
      sandboxUrl(`${media.id}?fields=id,caption,media_type,media_product_type&access_token=${token}`),
    )) as Record<string, unknown>;
    expect(published).toEqual({ id: media.id, caption, media_type: "VIDEO", media_product_type: "REELS" });
    expect(await redis.hgetall(`sandbox:media:${media.id}`)).toMatchObject({
      collaborators: '["ana.runs"]',
      trial_params: '{"graduation_strategy":"MANUAL"}',
    });
  });

  it("gets Meta's error object back as the SDK's FacebookRequestError: more than 3 collaborators is a 100", async () => {
    const api = new FacebookAdsApi(token, "en_US", false);
    const user = new IGUser(accountId, {}, null, api);
    const refused = await user
      .createMedia(
        [],
        {
          media_type: "REELS",
          video_url: `${samples.url}/samples/reel-valid.mp4`,
          collaborators: ["a", "b", "c", "d"],
          access_token: token,
        },
        sandboxUrl(`${accountId}/media`),
      )
      .then(
        () => undefined,
        (error: unknown) => error as { name: string; status: number; response: { code: number; message: string } },
      );
    expect(refused?.name).toBe("FacebookRequestError");
    expect(refused?.status).toBe(400);
    expect(refused?.response).toMatchObject({ code: 100, message: expect.stringMatching(/collaborators/) });
  });
});
