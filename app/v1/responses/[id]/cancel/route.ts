import { json, otherMethods, withTenant } from "@/lib/web/http";
import { openAIErrorResponse } from "@/lib/responses/errors";
import { cancelResponse } from "@/lib/responses/manage-response";

export const dynamic = "force-dynamic";

export const POST = withTenant(
  async (request: Request, { services, tenantId }, { params }: { params: Promise<{ id: string }> }) => {
    return json((await cancelResponse(services, tenantId, (await params).id, request.signal)).response);
  },
  openAIErrorResponse,
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ POST }, openAIErrorResponse);
