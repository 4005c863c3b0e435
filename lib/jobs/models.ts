import type { ModelInfo } from "./providers/provider";
import type { ModelPrice } from "./providers/provider-config";

/**
 * The built-in model and what a job costs, dependency-free so the dashboard imports them; the
 * models a deployment serves are read from its configuration by list-models.ts.
 */

export const LOCAL_MODEL = "local-ngram";
export const LOCAL_MODEL_VERSION = "local-ngram-1 (token trigrams, back-off, o200k_base BPE)";

/** The built-in model runs on the worker's own CPU: no one bills for its tokens, unless MODEL_PRICES says otherwise. */
export const FREE: ModelPrice = { input_per_million: 0, output_per_million: 0 };

export interface JobCost {
  cost: { currency: "USD"; amount: number } | null;
  /** Why `cost` is null; null when it is not. */
  cost_note: string | null;
}

/**
 * USD = prompt_tokens × input ÷ 10⁶ + completion_tokens × output ÷ 10⁶, at the model's configured
 * price. A model without one has no cost rather than a made-up 0, and the note says why.
 */
export function costOf(
  modelName: string,
  model: ModelInfo | undefined,
  usage: { prompt_tokens: number; completion_tokens: number },
): JobCost {
  if (!model?.price) return { cost: null, cost_note: `No price is configured for model ${modelName}` };
  const amount =
    (usage.prompt_tokens * model.price.input_per_million + usage.completion_tokens * model.price.output_per_million) /
    1_000_000;
  // Ten decimals keep a one-token cost exact and drop the float noise of the division.
  return { cost: { currency: "USD", amount: Number(amount.toFixed(10)) }, cost_note: null };
}

/** The job hash's fields for its cost (see read-job.ts). */
export function costFields(
  modelName: string,
  model: ModelInfo | undefined,
  usage: { prompt_tokens: number; completion_tokens: number },
): { cost: string; cost_note: string } {
  const { cost, cost_note } = costOf(modelName, model, usage);
  return { cost: cost ? JSON.stringify(cost) : "", cost_note: cost_note ?? "" };
}
