/**
 * A model provider streams text deltas; it may report usage at the end (the worker counts tokens
 * itself otherwise) and why it stopped: "length" when max_tokens cut it off, "stop" at a natural end.
 */
export interface GenerationRequest {
  model: string;
  prompt: string;
  temperature: number;
  maxTokens: number;
  signal: AbortSignal;
}

export type GenerationChunk =
  | { delta: string }
  | { usage: { prompt_tokens: number; completion_tokens: number } }
  | { finish_reason: "stop" | "length" };

export interface ModelInfo {
  id: string;
  /** "local" for the built-in model, else the name of the provider (LLM_PROVIDERS; "default" for LLM_BASE_URL) that serves it. */
  provider: string;
  version: string;
  description: string;
  /** USD per million tokens (MODEL_PRICES; the built-in model is free unless priced); null when no price is configured. */
  price: { input_per_million: number; output_per_million: number } | null;
}

export interface Provider {
  generate(request: GenerationRequest): AsyncIterable<GenerationChunk>;
}

/** A failure that retrying will not fix (bad model, refused prompt): the job fails at once. */
export class PermanentProviderError extends Error {}
