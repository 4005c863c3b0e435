import type { TenantLoad } from "@/lib/system/read-running";
import { formatNumber } from "../format";
import { Badge } from "../ui/badge";
import { Card, CardBody, CardHeader } from "../ui/card";
import { Alert } from "../ui/states";

/** The signed-in tenant's generation jobs across the cluster: running against its limit, and waiting for a slot. */
export function TenantLoadCard({ tenant }: { tenant: TenantLoad | null }) {
  const atLimit = tenant !== null && tenant.running >= tenant.limit;
  return (
    <Card data-testid="tenant-load">
      <CardHeader
        title="Your tenant"
        description="Your generation jobs across the cluster"
        actions={
          tenant && (
            <Badge tone={atLimit ? "warning" : tenant.running > 0 ? "info" : "neutral"}>
              {atLimit ? "At its limit" : tenant.running > 0 ? "Running" : "Idle"}
            </Badge>
          )
        }
      />
      <CardBody>
        {tenant === null ? (
          <Alert tone="warning" title="Your tenant's load could not be read">
            Its slots are counted in Redis, which did not answer; the next refresh tries again.
          </Alert>
        ) : (
          <div className="space-y-3">
            <p className="text-base" data-testid="tenant-load-summary">
              <span className="font-semibold tabular-nums">{formatNumber(tenant.running)}</span> running of{" "}
              <span className="tabular-nums">{formatNumber(tenant.limit)}</span> allowed ·{" "}
              <span className="font-semibold tabular-nums">{formatNumber(tenant.waiting)}</span> waiting
            </p>
            <div className="h-2 overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800" aria-hidden="true">
              <div
                className={atLimit ? "h-full rounded-full bg-amber-500" : "h-full rounded-full bg-blue-500"}
                style={{ width: `${Math.min(100, (tenant.running / Math.max(1, tenant.limit)) * 100)}%` }}
              />
            </div>
            {atLimit && tenant.waiting > 0 && (
              <p className="text-xs text-zinc-500 dark:text-zinc-400">
                Waiting jobs start as running ones finish; other tenants are not held up.
              </p>
            )}
          </div>
        )}
      </CardBody>
    </Card>
  );
}
