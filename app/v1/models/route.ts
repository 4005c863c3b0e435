import { json, otherMethods, withTenant } from "@/lib/web/http";
import { listModels } from "@/lib/jobs/list-models";
import { openAIErrorResponse } from "@/lib/responses/errors";
import { modelList } from "@/lib/responses/models";

export const dynamic = "force-dynamic";

export const GET = withTenant(async (request: Request, { services }) => {
  return json(modelList(listModels(services.config)));
}, openAIErrorResponse);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET }, openAIErrorResponse);
