import { ApiError } from "../errors";
import type { ModelInfo } from "../jobs/providers/provider";

/**
 * OpenAI's model object, with Dispatch's own fields beside (provider, version, description, price:
 * the dashboard reads them). `created` is when this process started serving the configuration,
 * the nearest Dispatch knows to OpenAI's "created".
 */
export type OpenAIModel = ModelInfo & { object: "model"; created: number; owned_by: string };

const SERVING_SINCE = Math.floor(Date.now() / 1000);

export function toOpenAIModel(model: ModelInfo): OpenAIModel {
  return {
    ...model,
    object: "model",
    created: SERVING_SINCE,
    owned_by: model.provider === "local" ? "dispatch" : model.provider,
  };
}

export function modelList(models: ModelInfo[]): { object: "list"; data: OpenAIModel[] } {
  return { object: "list", data: models.map(toOpenAIModel) };
}

export function findModel(models: ModelInfo[], id: string): OpenAIModel {
  const model = models.find((m) => m.id === id);
  if (!model) throw new ApiError("not-found", `The model '${id}' does not exist.`);
  return toOpenAIModel(model);
}
