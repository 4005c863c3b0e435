import { otherMethods, readJsonBody, withTenant } from "@/lib/web/http";
import { respondToCreate } from "@/lib/responses/create-response";
import { openAIErrorResponse } from "@/lib/responses/errors";
import { responseRequestSchema } from "@/lib/responses/request";

export const dynamic = "force-dynamic";

export const POST = withTenant(async (request: Request, { services, tenantId }) => {
  return respondToCreate(services, tenantId, await readJsonBody(request, responseRequestSchema), request.signal);
}, openAIErrorResponse);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST }, openAIErrorResponse);
