import { json, otherMethods, readJsonBody, withTenant } from "@/lib/web/http";
import { cancelPublication } from "@/lib/reels/cancel-publication";
import { parsePublicationId, publicationNotFound, readPublication } from "@/lib/reels/read-publication";
import { publicationUpdateSchema } from "@/lib/reels/publication-input";
import { updatePublication } from "@/lib/reels/update-publication";
import { discardUpload } from "@/lib/uploads/upload-store";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

export const GET = withTenant(async (request: Request, { services, tenantId }, { params }: Params) => {
  const publication = await readPublication(services.redis, tenantId, parsePublicationId((await params).id));
  if (!publication) throw publicationNotFound();
  return json(publication);
});

/** Changes a SCHEDULED publication's publish_at or caption. */
export const PATCH = withTenant(async (request: Request, { services, tenantId }, { params }: Params) => {
  const id = parsePublicationId((await params).id);
  const update = await readJsonBody(request, publicationUpdateSchema);
  return json(await updatePublication({ redis: services.redis }, tenantId, id, update));
});

/** Cancels a publication before anything reached Graph (SCHEDULED, or QUEUED without a container). */
export const DELETE = withTenant(async (request: Request, { services, tenantId }, { params }: Params) => {
  const deps = { redis: services.redis, recordUsage: services.config.USAGE_AGGREGATES };
  const cancelled = await cancelPublication(deps, tenantId, parsePublicationId((await params).id));
  // A cancelled publication's upload is freed at once (bounded storage).
  if (cancelled.upload_id) await discardUpload(services.redis, services.config.DATA_DIR, cancelled.upload_id);
  return json(cancelled);
});

export const { POST, PUT, OPTIONS } = otherMethods({ GET, PATCH, DELETE });
