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

export type GenerationChunk = { delta: string } | { usage: { prompt_tokens: number; completion_tokens: number } } | { finish_reason: "stop" | "length" };

export interface ModelInfo {
  id: string;
  provider: "local" | "openai-compatible";
  version: string;
  description: string;
  /** USD per million tokens; 0 for the local model. */
  price: { input_per_million: number; output_per_million: number };
}

export interface Provider {
  generate(request: GenerationRequest): AsyncIterable<GenerationChunk>;
}

/** A failure that retrying will not fix (bad model, refused prompt): the job fails at once. */
export class PermanentProviderError extends Error {}
