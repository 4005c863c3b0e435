/**
 * The framework's floor, for benchmarks: a route handler that does nothing but answer `{ok:true}`.
 * `npm run bench` compares POST /v1/jobs with it, so every figure reads as a fraction of what
 * Next.js itself serves on this machine. POST reads the body, as any handler taking one must.
 */
export const dynamic = "force-dynamic";

const ok = () => Response.json({ ok: true });

export function GET(): Response {
  return ok();
}

export async function POST(request: Request): Promise<Response> {
  await request.text();
  return ok();
}
