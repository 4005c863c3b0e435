import { z } from "zod";
import { GraphError } from "../error";
import { limitsOf } from "./deps";
import {
  authorize,
  graphJson,
  invalidParameter,
  parseParams,
  pickFields,
  requestedFields,
  type GraphCall,
} from "./graph-request";
import { requirePermission } from "./permissions";
import { IN_PROGRESS_STATUS, newAttemptOwner, resumeIfStale, startProcessing } from "./process-container";
import { FINISHED_STATUS } from "./fetch-and-check";
import { sweepVideoFilesNowAndThen } from "./resume-processing";
import { containerUploadUri } from "./upload-container";
import { newGraphId, visibleStatusCode, type ContainerRecord } from "./store";
import { insertContainer } from "./container-writes";
import { processingMsOf } from "./sandbox-accounts";
import { checkCaption } from "./caption-limits";
import { parseReelGraphParams, reelGraphParams } from "../reel-parameters";
import { checkCoverImage } from "./cover-image";

/** `POST /{ig-user-id}/media` and `GET /{container-id}` for reels. */

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function hasNoCredentials(value: string): boolean {
  try {
    const url = new URL(value);
    return !url.username && !url.password;
  } catch {
    return true;
  }
}

const required = (name: string) => ({ error: `The parameter ${name} is required` });

const booleanParam = (name: string) =>
  z
    .string()
    .transform((v) => v.toLowerCase())
    .refine((v) => ["true", "false", "1", "0"].includes(v), `Param ${name} must be a boolean`)
    .transform((v) => (v === "true" || v === "1" ? "true" : "false"));

/** Create parameters as Graph reads them: strings, unknown ones ignored; the further reel parameters: reel-parameters.ts. */
export const createContainerParams = z
  .object({
    media_type: z.string(required("media_type")).superRefine((value, ctx) => {
      if (value === "VIDEO")
        ctx.addIssue({
          code: "custom",
          message: "The VIDEO media type is no longer supported for publishing. Use media_type=REELS",
        });
      else if (value !== "REELS")
        ctx.addIssue({
          code: "custom",
          message: `Param media_type must be REELS: this sandbox publishes reels only (got "${value.slice(0, 40)}")`,
        });
    }),
    video_url: z
      .string()
      .min(1, required("video_url").error)
      .max(4096, "Param video_url is too long")
      .refine(isHttpUrl, "Param video_url must be a valid http or https URL")
      .refine(hasNoCredentials, "Param video_url must not contain a user name or password")
      .optional(),
    caption: z.string().default(""),
    share_to_feed: booleanParam("share_to_feed").default("true"),
    upload_type: z.enum(["resumable"], "Param upload_type must be resumable").optional(),
  })
  .superRefine((params, ctx) => {
    // A resumable container gets its bytes at the upload endpoint (uri); any other needs a video_url.
    if (params.upload_type === undefined && params.video_url === undefined)
      ctx.addIssue({ code: "custom", message: required("video_url").error });
  });

export async function createContainer(call: GraphCall, accountId: string): Promise<Response> {
  authorize(call, accountId, accountId);
  requirePermission(call, "publish");
  const input = parseParams(createContainerParams, call.params);
  checkCaption(input.caption);
  const reel = parseReelGraphParams(call.params);
  if (!reel.ok) throw invalidParameter(reel.message);
  const { deps } = call;
  if (reel.parameters.cover_url) await checkCoverImage(deps, reel.parameters.cover_url);
  const now = deps.now();
  const resumable = input.upload_type === "resumable";
  if (resumable && call.token?.login === "instagram") throw resumableNeedsFacebookLogin();
  const processingMs = await processingMsOf(deps, accountId);
  // A resumable container waits, unowned, for its bytes at the upload endpoint; then processing starts.
  const owner = resumable ? "" : newAttemptOwner();
  for (let attempt = 0; attempt < 3; attempt++) {
    const id = newGraphId("179");
    const outcome = await insertContainer(
      deps.redis,
      {
        id,
        account_id: accountId,
        media_type: "REELS",
        video_url: resumable ? "" : (input.video_url ?? ""),
        upload_type: input.upload_type,
        caption: input.caption,
        share_to_feed: input.share_to_feed,
        ...reelGraphParams(reel.parameters),
        created_at: now,
        status_code: "IN_PROGRESS",
        status: IN_PROGRESS_STATUS,
        owner,
        heartbeat_at: now,
        processing_started_at: now,
        attempts: 1,
        processing_ms: processingMs,
      },
      limitsOf(deps).containersPer24h,
    );
    if (outcome === "limit") throw containerLimitReached(limitsOf(deps).containersPer24h);
    if (outcome === "created") {
      if (!resumable) startProcessing(deps, id, owner);
      sweepVideoFilesNowAndThen(deps);
      deps.log("info", "sandbox container created", {
        container_id: id,
        account_id: accountId,
        upload_type: input.upload_type,
      });
      return graphJson(resumable ? { id, uri: containerUploadUri(call, id) } : { id });
    }
  }
  throw new GraphError({ code: -1, subcode: 2207032, message: "Create container failed. Please try again." });
}

const CONTAINER_FIELDS = ["id", "status_code", "status", "copyright_check_status"] as const;

const STATUS_TEXT: Record<string, string> = {
  IN_PROGRESS: IN_PROGRESS_STATUS,
  FINISHED: FINISHED_STATUS,
  EXPIRED: "Expired: Media was not published within 24 hours of its creation.",
  PUBLISHED: "Published: Media has been successfully published.",
};

/** Reads a container as Graph shows it; a read also revives processing that a dead process left behind. */
export async function readContainer(call: GraphCall, stored: ContainerRecord): Promise<Response> {
  authorize(call, stored.account_id, stored.id);
  const fields = requestedFields(call, CONTAINER_FIELDS, "ShadowIGMediaBuilder");
  const { container } = await resumeIfStale(call.deps, stored);
  const statusCode = visibleStatusCode(container, call.deps.now());
  const values = {
    id: container.id,
    status_code: statusCode,
    status: statusCode === "ERROR" ? container.status : STATUS_TEXT[statusCode],
    copyright_check_status: {
      status: statusCode === "IN_PROGRESS" ? "in_progress" : "completed",
      matches_found: false,
    },
  };
  return graphJson(pickFields(values, fields));
}

/**
 * Meta documents upload_type=resumable (rupload) for apps using Facebook Login for Business only;
 * an Instagram Login token publishes from a video_url. Meta does not document what it answers to a
 * resumable create with such a token: this is the closest documented shape, Graph's invalid
 * parameter (100) naming upload_type (the README says so too, under "Local files").
 */
function resumableNeedsFacebookLogin(): GraphError {
  return new GraphError({
    code: 100,
    message:
      "(#100) Param upload_type=resumable is not supported for this access token: resumable uploads need Facebook Login for Business; publish from a video_url",
  });
}

function containerLimitReached(limit: number): GraphError {
  return new GraphError({
    code: 9,
    message: `(#9) The account created the maximum of ${limit} containers allowed in 24 hours`,
    userTitle: "Too many containers",
    userMessage: "Wait before creating more media containers.",
  });
}
