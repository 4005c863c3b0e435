import { json, otherMethods } from "@/lib/web/http";

export const dynamic = "force-dynamic";

/** Liveness: the process answers. It checks nothing else, so a Redis outage never gets the web server restarted. */
export function GET(): Response {
  return json({ status: "ok" });
}

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
