import { json, otherMethods, withTenant } from "@/lib/web/http";
import { listModels } from "@/lib/jobs/list-models";

export const dynamic = "force-dynamic";

export const GET = withTenant(async (request: Request, { services }) => {
  return json({ data: listModels(services.config) });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
