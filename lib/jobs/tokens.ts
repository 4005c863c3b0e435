import { decode, encode } from "gpt-tokenizer";

/** Token counts and ids from a real BPE tokenizer (OpenAI's o200k_base), so usage figures mean what users expect. */
export const encodeTokens = (text: string): number[] => encode(text);
export const decodeTokens = (ids: number[]): string => decode(ids);
export const countTokens = (text: string): number => (text ? encode(text).length : 0);
