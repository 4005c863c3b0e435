import { json, otherMethods, withTenant } from "@/lib/web/http";
import { enforceRateLimit } from "@/lib/web/rate-limit";
import { receiveUpload } from "@/lib/uploads/receive-upload";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const POST = withTenant(async (request: Request, { services, tenantId }) => {
  await enforceRateLimit(services.redis, tenantId, "submit", services.config.RATE_LIMIT_PER_MINUTE);
  return json(await receiveUpload({ redis: services.redis, config: services.config }, tenantId, request), 201);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST });
