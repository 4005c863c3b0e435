import type { ChartData } from "@/lib/usage/usage-charts";
import { hasData } from "@/lib/usage/usage-charts";
import { Card, CardBody, CardHeader } from "../ui/card";
import { Empty } from "../ui/states";
import { UsageBarChart } from "./bar-chart";
import { ChartTable, TableView } from "./chart-table";
import type { ChartUnit } from "./chart-values";

interface ChartCardProps {
  id: string;
  title: string;
  description: string;
  data: ChartData;
  unit: ChartUnit;
  /** What the rows are: "Hour (UTC)", "Model"… */
  rowHeader: string;
  /** What the chart will show once there is something to show. */
  empty: { title: string; detail: string };
}

/** One chart of the Usage page with its numbers as a table, or what will appear. */
export function ChartCard({ id, title, description, data, unit, rowHeader, empty }: ChartCardProps) {
  // The table leaves out rows where every value is zero: a month of hours is mostly empty.
  const rows = data.rows.filter((row) => data.series.some((s) => Number(row[s.key]) > 0));
  return (
    <Card aria-labelledby={`${id}-title`} data-testid={`usage-${id}`} className="min-w-0">
      <CardHeader title={<span id={`${id}-title`}>{title}</span>} description={description} />
      <CardBody>
        {hasData(data) ? (
          <>
            <UsageBarChart data={data} unit={unit} />
            <TableView>
              <ChartTable title={title} data={{ ...data, rows }} unit={unit} rowHeader={rowHeader} />
            </TableView>
          </>
        ) : (
          <Empty title={empty.title}>{empty.detail}</Empty>
        )}
      </CardBody>
    </Card>
  );
}
