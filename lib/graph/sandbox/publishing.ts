import { z } from "zod";
import { GraphError } from "../error";
import { DAY_MS, limitsOf } from "./deps";
import { authorize, graphJson, parseParams, requestedFields, type GraphCall } from "./graph-request";
import { requirePermission } from "./permissions";
import { resumeIfStale } from "./process-container";
import { publishLimitOf } from "./sandbox-accounts";
import { countPublishedSince, publishContainerRecord } from "./publish-store";
import { isGraphId, readContainerRecord } from "./store";

/** `POST /{ig-user-id}/media_publish` and `GET /{ig-user-id}/content_publishing_limit`. */

const publishParams = z.object({
  creation_id: z
    .string({ error: "The parameter creation_id is required" })
    .refine(isGraphId, "Param creation_id must be a valid media container id"),
});

export async function publishContainer(call: GraphCall, accountId: string): Promise<Response> {
  authorize(call, accountId, accountId);
  requirePermission(call, "publish");
  const { creation_id: containerId } = parseParams(publishParams, call.params);
  const { deps } = call;
  const quota = await publishLimitOf(deps, accountId);
  const result = await publishContainerRecord(deps.redis, {
    containerId,
    accountId,
    now: deps.now(),
    quota,
    mediaTtlMs: limitsOf(deps).mediaTtlMs,
  });
  switch (result.kind) {
    case "published-now":
      deps.log("info", "sandbox container published", {
        container_id: containerId,
        media_id: result.mediaId,
        account_id: accountId,
      });
      return graphJson({ id: result.mediaId });
    case "published":
      throw notReady("The media has already been published.");
    case "not-ready": {
      const stored = await readContainerRecord(deps.redis, containerId);
      // Touching a container whose processor died revives it, as a status read would.
      const container = stored ? (await resumeIfStale(deps, stored)).container : undefined;
      throw notReady(
        container?.status_code === "ERROR" ? "The media failed processing; create a new container." : undefined,
      );
    }
    case "expired":
      throw new GraphError({
        code: -2,
        subcode: 2207020,
        message: "The media you are trying to access has expired. Please try to upload again.",
        userTitle: "Media expired",
        userMessage: "The container was not published within 24 hours; create a new one.",
      });
    case "quota":
      // Meta's words for the publishing limit (not code 4's "Application request limit reached").
      throw new GraphError({
        code: 9,
        subcode: 2207042,
        message: "You reached maximum number of posts that is allowed to be published by Content Publishing API.",
        userTitle: "Max. number of posts reached",
        userMessage: `You reached maximum number of posts that is allowed to be published by Content Publishing API (${quota} in a moving 24 hours). Try again later.`,
      });
    case "not-found":
      throw new GraphError({
        code: 24,
        subcode: 2207006,
        message: `The media with id ${containerId} cannot be found`,
        userTitle: "Media not found",
        userMessage: "The media container could not be found; create a new one.",
      });
  }
}

function notReady(userMessage = "The media is not ready for publishing, please wait for a moment."): GraphError {
  return new GraphError({
    code: 9007,
    subcode: 2207027,
    message: "Media ID is not available",
    userTitle: "Media Not Ready",
    userMessage,
  });
}

const LIMIT_FIELDS = ["quota_usage", "config"] as const;

const limitParams = z.object({
  since: z
    .string()
    .regex(/^\d{1,12}$/, "Param since must be a unix timestamp")
    .transform(Number)
    .optional(),
});

/**
 * Posts published in the moving 24 h (or, with `since`, a unix timestamp no older than 24 h, since
 * then: an older one counts the whole window) and the limit.
 */
export async function readPublishingLimit(call: GraphCall, accountId: string): Promise<Response> {
  authorize(call, accountId, accountId);
  const fields = requestedFields(call, LIMIT_FIELDS, "ContentPublishingLimitResponse", ["quota_usage"]);
  const { since } = parseParams(limitParams, call.params);
  const { deps } = call;
  const usage = await countPublishedSince(
    deps.redis,
    accountId,
    deps.now(),
    since === undefined ? undefined : since * 1000,
  );
  const entry: Record<string, unknown> = {};
  if (fields.includes("quota_usage")) entry.quota_usage = usage;
  if (fields.includes("config"))
    entry.config = { quota_total: await publishLimitOf(deps, accountId), quota_duration: DAY_MS / 1000 };
  return graphJson({ data: [entry] });
}
