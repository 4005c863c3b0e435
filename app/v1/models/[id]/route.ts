import { json, otherMethods, withTenant } from "@/lib/web/http";
import { listModels } from "@/lib/jobs/list-models";
import { openAIErrorResponse } from "@/lib/responses/errors";
import { findModel } from "@/lib/responses/models";

export const dynamic = "force-dynamic";

export const GET = withTenant(
  async (request: Request, { services }, { params }: { params: Promise<{ id: string }> }) => {
    return json(findModel(listModels(services.config), (await params).id));
  },
  openAIErrorResponse,
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET }, openAIErrorResponse);
