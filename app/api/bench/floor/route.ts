import { otherMethods, problemResponse, readBody } from "@/lib/web/http";
import { notFoundRoute } from "@/lib/web/not-found-route";
import { getConfig } from "@/lib/config";

/**
 * The framework's floor, for benchmarks: a route handler that does nothing but answer `{ok:true}`.
 * `npm run bench` compares POST /v1/jobs with it, so every figure reads as a fraction of what
 * Next.js itself serves on this machine. It exists only in a server the bench started with
 * BENCH_FLOOR_ROUTE=1; elsewhere it is an unknown path. POST reads the body as every route does.
 */
export const dynamic = "force-dynamic";

const ok = () => Response.json({ ok: true });

export function GET(): Promise<Response> | Response {
  if (!getConfig().BENCH_FLOOR_ROUTE) return notFoundRoute();
  return ok();
}

export async function POST(request: Request): Promise<Response> {
  if (!getConfig().BENCH_FLOOR_ROUTE) return notFoundRoute();
  try {
    await readBody(request);
  } catch (error) {
    return problemResponse(error);
  }
  return ok();
}

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET, POST });
