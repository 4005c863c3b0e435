import { checkReadiness, readinessResponse } from "@/lib/health";
import { otherMethods, withProblems } from "@/lib/web/http";
import { getServices } from "@/lib/web/services";

export const dynamic = "force-dynamic";

/** Readiness: Redis, the broker and at least one worker; 503 problem+json naming what is not ready. */
export const GET = withProblems(async () => readinessResponse(await checkReadiness(getServices())));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
