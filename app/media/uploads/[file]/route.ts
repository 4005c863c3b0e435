import { fileResponse } from "@/lib/web/file-response";
import { otherMethods } from "@/lib/web/http";
import { getServices } from "@/lib/web/services";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/**
 * An uploaded video at the signed address Graph was given as video_url (lib/reels/upload-for-graph.ts).
 * No session or API key: Meta's fetcher has neither; the signature is the credential. A refusal
 * says nothing of why: 403 for an address that is not signed for this file or has expired, 404
 * for one whose publication no longer waits for Graph's fetch.
 */
async function answer(request: Request, context: { params: Promise<{ file: string }> }): Promise<Response> {
  const { file } = await context.params;
  const served = await getServices().uploadUrls.serve(file, new URL(request.url).searchParams, Date.now());
  if (served === "forbidden" || served === "gone")
    return new Response(null, {
      status: served === "forbidden" ? 403 : 404,
      headers: { "cache-control": "no-store" },
    });
  return fileResponse(request, served);
}

export const GET = answer;
export const HEAD = answer;
export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
