import { z } from "zod";
import { json, otherMethods, parseWith, withTenant } from "@/lib/web/http";
import { readReelInsights } from "@/lib/reels/insights/read-reel-insights";
import { parsePublicationId } from "@/lib/reels/read-publication";

export const dynamic = "force-dynamic";

/** A published reel's insights; Graph is asked when the last reading is 15 minutes old or more. */
export const GET = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
    parseWith(z.strictObject({}), Object.fromEntries(new URL(request.url).searchParams));
    const id = parsePublicationId((await params).id);
    const deps = { redis: services.redis, graphs: services.graphs, connected: services.accounts, now: Date.now };
    return json(await readReelInsights(deps, tenantId, id, request.signal));
  },
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
