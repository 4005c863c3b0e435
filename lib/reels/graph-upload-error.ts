import { z } from "zod";
import { brandedError } from "../brand";
import type { GraphErrorAction } from "./graph-error-table";

/**
 * The resumable upload endpoint's own failure (rupload): not a Graph error object but
 * `{"debug_info": {"retriable", "type", "message"}}`. `retriable` says whether sending the bytes
 * again can work; a refused token (an authorization type, or HTTP 401/403) needs the account
 * reconnected; anything else leaves the container unusable, so a new one is the way on.
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

  /** The upload was refused for its token: an authorization or token type, or HTTP 401/403. */
  get tokenRefused(): boolean {
    return this.status === 401 || this.status === 403 || /auth|token|session/i.test(this.type);
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
