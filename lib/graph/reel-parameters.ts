import { z } from "zod";
import {
  GRADUATION_STRATEGIES,
  REEL_PARAMETER_LIMITS,
  REEL_PARAMETER_NAMES,
  type ReelParameterName,
} from "./reel-parameter-limits";

/**
 * Meta's further REELS container parameters (graph-reference.md, "Create" and "More REELS
 * container parameters"), declared once: Dispatch's API validates them with these schemas, the
 * publish flow sends them as Graph takes them, and the sandbox holds its callers to the same rules.
 */

const username = z
  .string()
  .regex(/^[A-Za-z0-9._]{1,30}$/, "must be an Instagram username: up to 30 letters, digits, periods or underscores");

const tagCoordinate = z.number().min(0, "must be from 0 to 1").max(1, "must be from 0 to 1");

export const userTagSchema = z
  .strictObject({ username, x: tagCoordinate.optional(), y: tagCoordinate.optional() })
  .refine((tag) => (tag.x === undefined) === (tag.y === undefined), "must give both x and y, or neither");
export type UserTag = z.infer<typeof userTagSchema>;

export const trialParamsSchema = z.strictObject({
  graduation_strategy: z.enum(GRADUATION_STRATEGIES, "must be MANUAL or SS_PERFORMANCE"),
});
export type TrialParams = z.infer<typeof trialParamsSchema>;

const L = REEL_PARAMETER_LIMITS;
const isList = (payload: { value: unknown }) => Array.isArray(payload.value);

/** The parameters as Dispatch's API takes them (JSON values); all optional, as in Graph. */
export const reelParametersShape = {
  cover_url: z
    .string()
    .max(L.maxCoverUrlChars, `must be at most ${L.maxCoverUrlChars} characters`)
    .pipe(z.url({ protocol: /^https?$/, message: "must be an http(s) URL of a JPEG" }))
    .optional()
    .meta({ description: "A public JPEG (at most 8 MB) for the reel's cover; Graph then ignores thumb_offset." }),
  thumb_offset: z
    .number()
    .int("must be a whole number of milliseconds")
    .min(0, "must not be negative")
    .max(L.maxThumbOffsetMs, `must be inside the video (a reel is at most ${L.maxThumbOffsetMs} ms)`)
    .optional()
    .meta({
      description:
        "Milliseconds into the video: the frame that becomes the cover (Graph: default 0, less than the video's length).",
    }),
  audio_name: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(L.maxAudioNameChars, `must be at most ${L.maxAudioNameChars} characters`)
    .optional()
    .meta({ description: "A name for the reel's original audio (Instagram lets it be set once)." }),
  collaborators: z
    .array(username)
    // Counted only on a list (refine's `when`): zod's max() measures a string's length too.
    .refine((names) => names.length <= L.maxCollaborators, {
      message: `must list at most ${L.maxCollaborators} collaborators`,
      when: isList,
    })
    .refine((names) => new Set(names.map((n) => String(n).toLowerCase())).size === names.length, {
      message: "must name each collaborator once",
      when: isList,
    })
    .optional()
    .meta({
      description: "Instagram usernames (at most 3) invited to co-author the reel.",
      maxItems: L.maxCollaborators,
    }),
  location_id: z
    .string()
    .regex(/^\d{1,20}$/, "must be the id of a Facebook Page with a location")
    .optional()
    .meta({ description: "The id of a Facebook Page with a location, tagged as the reel's place." }),
  user_tags: z
    .array(userTagSchema)
    .refine((tags) => tags.length <= L.maxUserTags, {
      message: `must list at most ${L.maxUserTags} tags`,
      when: isList,
    })
    .optional()
    .meta({
      description: "People tagged in the reel: [{username, x?, y?}], x and y from 0 to 1.",
      maxItems: L.maxUserTags,
    }),
  trial_params: trialParamsSchema.optional().meta({
    description:
      "Makes it a trial reel, shown to non-followers first: graduation_strategy MANUAL (graduate it in the Instagram app) or SS_PERFORMANCE (graduates by itself when it performs well).",
  }),
} satisfies Record<ReelParameterName, z.ZodType>;

const reelParametersSchema = z.object(reelParametersShape);
export type ReelParameters = z.infer<typeof reelParametersSchema>;

/** The parameters as Graph's form takes them: strings, arrays and objects JSON-encoded; absent ones left out. */
export function reelGraphParams(parameters: ReelParameters): Partial<Record<keyof ReelParameters, string>> {
  const params: Partial<Record<keyof ReelParameters, string>> = {};
  for (const name of REEL_PARAMETER_NAMES) {
    const value = parameters[name];
    if (value === undefined) continue;
    params[name] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return params;
}

/**
 * Graph's form values read back into the parameters, the way Graph reads them: numbers as digits,
 * arrays and objects as JSON. The first problem is Graph's (#100) message, naming the parameter.
 */
export function parseReelGraphParams(
  params: Record<string, string>,
): { ok: true; parameters: ReelParameters } | { ok: false; message: string } {
  const raw: Record<string, unknown> = {};
  for (const name of REEL_PARAMETER_NAMES) {
    const value = params[name];
    if (value === undefined) continue;
    if (name === "thumb_offset") raw[name] = /^\d{1,9}$/.test(value) ? Number(value) : value;
    else if (name === "collaborators" || name === "user_tags" || name === "trial_params") raw[name] = jsonOr(value);
    else raw[name] = value;
  }
  const parsed = reelParametersSchema.safeParse(raw);
  if (parsed.success) return { ok: true, parameters: parsed.data };
  const issue = parsed.error.issues[0];
  const name = String(issue?.path[0] ?? "");
  const where = issue && issue.path.length > 1 ? ` (${issue.path.slice(1).join(".")})` : "";
  return { ok: false, message: `Param ${name}${where} ${describeIssue(name, issue?.message)}` };
}

function jsonOr(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function describeIssue(name: string, message: string | undefined): string {
  if (name === "thumb_offset" && message?.startsWith("Invalid input"))
    return "must be a non-negative integer (milliseconds)";
  if (name === "collaborators" && message?.startsWith("Invalid input"))
    return `must be an array of at most ${L.maxCollaborators} usernames`;
  if (name === "user_tags" && message?.startsWith("Invalid input"))
    return "must be an array of {username, x, y} objects";
  if (name === "trial_params" && message?.startsWith("Invalid input"))
    return 'must be an object like {"graduation_strategy":"MANUAL"}';
  return message ?? "is invalid";
}
