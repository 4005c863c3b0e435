import { describe, expect, it } from "vitest";
import { publicationInputSchema } from "@/lib/reels/publication-input";
import { parseReelGraphParams, reelGraphParams, type ReelParameters } from "@/lib/graph/reel-parameters";

const base = { account_id: "17841400000000101", video_url: "https://videos.test/a.mp4" };
const parse = (over: Record<string, unknown>) => publicationInputSchema.safeParse({ ...base, ...over });

/** Every rule of Meta's further reel parameters, each as Dispatch's API takes it and as it refuses it. */
describe("the reel parameters in publicationInputSchema", () => {
  it.each<[string, Record<string, unknown>]>([
    ["a cover_url", { cover_url: "https://cdn.test/cover.jpg" }],
    ["thumb_offset 0", { thumb_offset: 0 }],
    ["thumb_offset at 15 min less a millisecond", { thumb_offset: 899_999 }],
    ["thumb_offset beside a cover_url (Graph ignores it)", { thumb_offset: 500, cover_url: "https://cdn.test/c.jpg" }],
    ["an audio_name", { audio_name: "Morning run" }],
    ["three collaborators", { collaborators: ["ana.runs", "bo_b", "carl"] }],
    ["no collaborators", { collaborators: [] }],
    ["a location_id", { location_id: "7640348500" }],
    ["user tags with and without a position", { user_tags: [{ username: "ana", x: 0, y: 1 }, { username: "bo" }] }],
    ["share_to_feed false", { share_to_feed: false }],
    ["a MANUAL trial", { trial_params: { graduation_strategy: "MANUAL" } }],
    ["an SS_PERFORMANCE trial", { trial_params: { graduation_strategy: "SS_PERFORMANCE" } }],
  ])("accepts %s", (_name, over) => {
    const parsed = parse(over);
    expect(parsed.error?.issues).toBeUndefined();
    expect(parsed.data).toMatchObject(over);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["a cover_url that is not http(s)", { cover_url: "ftp://cdn.test/c.jpg" }, "cover_url"],
    ["a cover_url that is no URL", { cover_url: "cover.jpg" }, "cover_url"],
    ["a negative thumb_offset", { thumb_offset: -1 }, "thumb_offset"],
    ["a fractional thumb_offset", { thumb_offset: 1.5 }, "thumb_offset"],
    ["thumb_offset as a string", { thumb_offset: "1500" }, "thumb_offset"],
    ["thumb_offset past the longest reel", { thumb_offset: 900_001 }, "thumb_offset"],
    ["an empty audio_name", { audio_name: "  " }, "audio_name"],
    ["a 101-character audio_name", { audio_name: "a".repeat(101) }, "audio_name"],
    ["four collaborators", { collaborators: ["a", "b", "c", "d"] }, "collaborators"],
    ["a collaborator twice", { collaborators: ["ana", "ANA"] }, "collaborators"],
    ["a collaborator that is no username", { collaborators: ["ana runs"] }, "collaborators.0"],
    ["collaborators as a string", { collaborators: "ana,bo" }, "collaborators"],
    ["a location_id that is a name", { location_id: "Paris" }, "location_id"],
    ["a user tag off the media", { user_tags: [{ username: "ana", x: 1.2, y: 0 }] }, "user_tags.0.x"],
    ["a user tag with x and no y", { user_tags: [{ username: "ana", x: 0.5 }] }, "user_tags.0"],
    ["a user tag without a username", { user_tags: [{ x: 0.5, y: 0.5 }] }, "user_tags.0.username"],
    ["21 user tags", { user_tags: Array.from({ length: 21 }, (_, i) => ({ username: `u${i}` })) }, "user_tags"],
    [
      "an unknown graduation_strategy",
      { trial_params: { graduation_strategy: "LATER" } },
      "trial_params.graduation_strategy",
    ],
    ["trial_params without a strategy", { trial_params: {} }, "trial_params.graduation_strategy"],
    ["trial_params as a string", { trial_params: "MANUAL" }, "trial_params"],
    ["share_to_feed as a string", { share_to_feed: "false" }, "share_to_feed"],
  ])("refuses %s, naming %s", (_name, over, path) => {
    const parsed = parse(over);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join("."))).toEqual([path]);
  });
});

describe("the reel parameters as Graph's form", () => {
  const every: ReelParameters = {
    cover_url: "https://cdn.test/cover.jpg",
    thumb_offset: 1500,
    audio_name: "Morning run",
    collaborators: ["ana.runs", "bo_b"],
    location_id: "7640348500",
    user_tags: [{ username: "carla", x: 0.5, y: 0.25 }, { username: "dan" }],
    trial_params: { graduation_strategy: "SS_PERFORMANCE" },
  };

  it("encodes them as Graph takes them and reads them back unchanged", () => {
    const form = reelGraphParams(every);
    expect(form).toEqual({
      cover_url: "https://cdn.test/cover.jpg",
      thumb_offset: "1500",
      audio_name: "Morning run",
      collaborators: '["ana.runs","bo_b"]',
      location_id: "7640348500",
      user_tags: '[{"username":"carla","x":0.5,"y":0.25},{"username":"dan"}]',
      trial_params: '{"graduation_strategy":"SS_PERFORMANCE"}',
    });
    expect(parseReelGraphParams(form as Record<string, string>)).toEqual({ ok: true, parameters: every });
    expect(reelGraphParams({})).toEqual({});
  });

  it.each<[Record<string, string>, string]>([
    [{ thumb_offset: "-1" }, "Param thumb_offset must be a non-negative integer (milliseconds)"],
    [{ thumb_offset: "soon" }, "Param thumb_offset must be a non-negative integer (milliseconds)"],
    [{ collaborators: '["a","b","c","d"]' }, "Param collaborators must list at most 3 collaborators"],
    [{ collaborators: "ana" }, "Param collaborators must be an array of at most 3 usernames"],
    [
      { trial_params: '{"graduation_strategy":"SOON"}' },
      "Param trial_params (graduation_strategy) must be MANUAL or SS_PERFORMANCE",
    ],
    [{ user_tags: '[{"username":"a","x":2,"y":0}]' }, "Param user_tags (0.x) must be from 0 to 1"],
  ])("refuses %j with Graph's words: %s", (form, message) => {
    expect(parseReelGraphParams(form)).toEqual({ ok: false, message });
  });
});
