import { json, otherMethods, withTenant } from "@/lib/web/http";
import { openAIErrorResponse } from "@/lib/responses/errors";
import { deleteResponse, respondToRetrieve } from "@/lib/responses/manage-response";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

export const GET = withTenant(async (request: Request, { services, tenantId }, { params }: Params) => {
  const query = Object.fromEntries(new URL(request.url).searchParams);
  return respondToRetrieve(services, tenantId, (await params).id, query, request.signal);
}, openAIErrorResponse);

export const DELETE = withTenant(async (request: Request, { services, tenantId }, { params }: Params) => {
  return json(await deleteResponse(services, tenantId, (await params).id, request.signal));
}, openAIErrorResponse);

export const { POST, PUT, PATCH, OPTIONS } = otherMethods({ GET, DELETE }, openAIErrorResponse);
