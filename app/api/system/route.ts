import { checkHealth } from "@/lib/health";
import { json, otherMethods, withTenant } from "@/lib/web/http";
import { readTenantLoad } from "@/lib/system/read-running";
import { readSystemStatus } from "@/lib/system/read-system-status";

export const dynamic = "force-dynamic";

/** Health (with the workers' load), consumer lag, the tenant's jobs by status and its running share, for the system page. */
export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const [health, status, tenant] = await Promise.all([
    checkHealth(services),
    readSystemStatus(services, tenantId),
    readTenantLoad(services.redis, tenantId, services.config.TENANT_CONCURRENCY).catch(() => null),
  ]);
  return json({ health, ...status, tenant });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
