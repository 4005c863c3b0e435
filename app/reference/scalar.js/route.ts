import { fileResponse } from "@/lib/web/file-response";
import { otherMethods } from "@/lib/web/http";
import { scalarBundle } from "@/lib/openapi/reference-bundle";

export const dynamic = "force-dynamic";

/** The API reference page's renderer, from node_modules (no CDN). */
export function GET(request: Request): Response {
  return fileResponse(request, scalarBundle());
}

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
