import { authenticate } from "@/lib/auth";
import { json, withProblems } from "@/lib/http";
import { listModels } from "@/lib/jobs/models";
import { getServices } from "@/lib/services";

export const dynamic = "force-dynamic";

export const GET = withProblems(async (request: Request) => {
  const services = getServices();
  await authenticate(request, services);
  return json({ data: listModels(services.config) });
});
