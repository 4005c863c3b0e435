import { z } from "zod";
import { brandedError } from "../brand";
import type { GraphErrorAction } from "./error-table";

/**
 * The resumable upload endpoint's own failure (rupload): not a Graph error object but
 * `{"debug_info": {"retriable", "type", "message"}}`. `retriable` says whether sending the bytes
 * again can work; a refused token needs the account reconnected; anything else leaves the
 * container unusable, so a new one is the way on.
 *
 * Meta documents one refused token: a ProcessingFailedError whose message is itself JSON,
 * `{"success":false,"error":{"message":"unauthorized user request"}}` (graph-reference.md,
 * "Resumable upload"), with no HTTP status given. That is what is read; HTTP 401/403 are read as a
 * refusal too, since they say so whatever the body (Meta documents no such answer).
 */
export class GraphUploadError extends brandedError("dispatch.graph-upload-error") {
  constructor(
    message: string,
    /** debug_info.type, e.g. ProcessingFailedError. */
    readonly type: string,
    readonly retriable: boolean,
    /** HTTP status of the answer. */
    readonly status: number,
    readonly fbtraceId: string | null = null,
  ) {
    super(message);
    this.name = "GraphUploadError";
  }

  /** The upload was refused for its token: Meta's "unauthorized user request", or HTTP 401/403. */
  get tokenRefused(): boolean {
    return (
      this.status === 401 || this.status === 403 || nestedErrorMessage(this.message) === "unauthorized user request"
    );
  }

  get action(): GraphErrorAction {
    if (this.tokenRefused) return "reconnect-account";
    return this.retriable ? "retry" : "new-container";
  }

  /** Reads `{debug_info}` from an upload answer; undefined when the body is not one. */
  static fromResponse(body: unknown, status: number, fbtraceId: string | null): GraphUploadError | undefined {
    const parsed = uploadErrorSchema.safeParse(body);
    if (!parsed.success) return undefined;
    const info = parsed.data.debug_info;
    return new GraphUploadError(
      info.message || `upload failed (${info.type})`,
      info.type,
      info.retriable,
      status,
      fbtraceId,
    );
  }
}

const uploadErrorSchema = z.object({
  debug_info: z.object({
    retriable: z.boolean().catch(false),
    type: z.string().catch("UnknownError"),
    message: z.string().catch(""),
  }),
});

/** The `error.message` of a debug_info message that is itself JSON (`{"success":false,"error":{"message":…}}`). */
function nestedErrorMessage(message: string): string | undefined {
  if (!message.trimStart().startsWith("{")) return undefined;
  try {
    const parsed = nestedErrorSchema.safeParse(JSON.parse(message));
    return parsed.success ? parsed.data.error.message.trim().toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

const nestedErrorSchema = z.object({ error: z.object({ message: z.string() }) });
