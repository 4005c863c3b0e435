import { checkHealth } from "@/lib/health";
import { json, otherMethods, withProblems } from "@/lib/web/http";
import { getServices } from "@/lib/web/services";

export const dynamic = "force-dynamic";

export const GET = withProblems(async () => {
  const services = getServices();
  const health = await checkHealth(services);
  return json(health, health.status === "ok" ? 200 : 503);
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
