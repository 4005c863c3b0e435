import { describe, expect, it } from "vitest";
import { CANCEL_CHANNEL, jobKeys } from "@/lib/jobs/keys";
import { CONSUMER_GROUPS, TOPICS } from "@/lib/topics";
import { WORKERS_KEY } from "@/lib/live-workers";
import { usageKeys } from "@/lib/usage/usage-keys";

/**
 * The names other programs see (SPEC: topics, job:state and job:stream; the rest as README and
 * docs/architecture.md document them), spelt literally here on purpose and nowhere else in the
 * tests: renaming one in lib must fail this file, not pass silently everywhere.
 */
describe("the wire names", () => {
  it.each([
    ["job state", jobKeys.state("j1"), "job:state:j1"],
    ["job stream channel", jobKeys.stream("j1"), "job:stream:j1"],
    ["job replay list", jobKeys.events("j1"), "job:events:j1"],
    ["job lease", jobKeys.lease("j1"), "job:lease:j1"],
    ["tenant job index", jobKeys.tenantIndex("acme"), "tenant:jobs:acme"],
    ["cancel channel", CANCEL_CHANNEL, "jobs:cancel"],
    ["worker heartbeats", WORKERS_KEY, "workers:seen"],
    ["requests topic", TOPICS.requests.name, "ai.generation.requests"],
    ["audit topic", TOPICS.completed.name, "ai.generation.completed"],
    ["dead-letter topic", TOPICS.dlq.name, "ai.generation.requests.dlq"],
    ["reel requests topic", TOPICS.reels.name, "reels.publish.requests"],
    ["reel events topic", TOPICS.reelEvents.name, "reels.publication.events"],
    ["generation consumer group", CONSUMER_GROUPS.generation, "ai-generation-workers"],
    ["reel consumer group", CONSUMER_GROUPS.reels, "reel-publish-workers"],
    ["reel webhook consumer group", CONSUMER_GROUPS.reelWebhooks, "webhook-reel-event-workers"],
    [
      "usage of a tenant's jobs in an hour",
      usageKeys.bucket("jobs", "acme", "hour", 1_764_115_200_000),
      "usage:jobs:acme:hour:1764115200",
    ],
    [
      "usage of a tenant's reels in a day",
      usageKeys.bucket("reels", "acme", "day", 1_764_115_200_000),
      "usage:reels:acme:day:1764115200",
    ],
  ])("%s", (_what, actual, expected) => {
    expect(actual).toBe(expected);
  });
});
