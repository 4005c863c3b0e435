import { z } from "zod";
import { GraphTransportError } from "./error";
import { REEL_INSIGHT_METRICS, type InsightValues, type ReelInsightMetric } from "./insights-metrics";

/**
 * Reads Graph's insights answer: `{"data":[{"name","period","values":[{"value"}],…}]}` (newer
 * versions may send `total_value: {value}` instead of `values`). Lenient like the error schema:
 * numbers sometimes come as strings, and a metric Dispatch does not show is skipped.
 */
const insightEntrySchema = z.looseObject({
  name: z.string(),
  values: z.array(z.looseObject({ value: z.unknown() })).optional(),
  total_value: z.looseObject({ value: z.unknown() }).optional(),
});
const insightsAnswerSchema = z.looseObject({ data: z.array(z.unknown()) });

const isShownMetric = (name: string): name is ReelInsightMetric =>
  (REEL_INSIGHT_METRICS as readonly string[]).includes(name);

/**
 * The values by metric; null when `data` is empty, which is how Graph says "nothing available
 * yet" (never zeros). An answer without a `data` array is not Graph's.
 */
export function parseInsightsAnswer(body: unknown, mediaId: string): InsightValues | null {
  const answer = insightsAnswerSchema.safeParse(body);
  if (!answer.success)
    throw new GraphTransportError(`GET /${mediaId}/insights answered without a data array`, 200, false);
  if (answer.data.data.length === 0) return null;
  const values: InsightValues = {};
  for (const raw of answer.data.data) {
    const entry = insightEntrySchema.safeParse(raw);
    if (!entry.success || !isShownMetric(entry.data.name)) continue;
    const value = numberOf(entry.data.values?.at(-1)?.value ?? entry.data.total_value?.value);
    if (value !== undefined) values[entry.data.name] = value;
  }
  return values;
}

function numberOf(value: unknown): number | undefined {
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof number === "number" && Number.isFinite(number) && number >= 0 ? number : undefined;
}
