import { json, otherMethods, withTenant } from "@/lib/web/http";
import { usageCsv } from "@/lib/usage/usage-csv";
import { parseUsageQuery } from "@/lib/usage/usage-query";
import { readUsagePage } from "@/lib/usage/usage-report";

export const dynamic = "force-dynamic";

export const GET = withTenant(async (request: Request, { services, tenantId }) => {
  const query = parseUsageQuery(Object.fromEntries(new URL(request.url).searchParams), Date.now());
  const page = await readUsagePage(services.redis, tenantId, query);
  if (query.format === "json") return json(page);
  return new Response(usageCsv(page), {
    headers: {
      "content-type": "text/csv; charset=utf-8; header=present",
      "content-disposition": 'attachment; filename="usage.csv"',
      "cache-control": "no-store",
    },
  });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods({ GET });
