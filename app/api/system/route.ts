import { authenticate } from "@/lib/auth";
import { checkHealth } from "@/lib/health";
import { json, withProblems } from "@/lib/http";
import { getServices } from "@/lib/services";
import { readSystemStatus } from "@/lib/system/read-system-status";

export const dynamic = "force-dynamic";

/** Health, consumer lag and the tenant's jobs by status, for the dashboard's system page. */
export const GET = withProblems(async (request: Request) => {
  const services = getServices();
  const { tenantId } = authenticate(request, services.keys);
  const [health, status] = await Promise.all([checkHealth(services), readSystemStatus(services, tenantId)]);
  return json({ health, ...status });
});
