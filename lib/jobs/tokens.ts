import { decode as decodeSpecial, encode } from "gpt-tokenizer";
import ranks from "gpt-tokenizer/bpeRanks/o200k_base";

/** Token counts and ids from a real BPE tokenizer (OpenAI's o200k_base), so usage figures mean what users expect. */
export const encodeTokens = (text: string): number[] => encode(text);
export const countTokens = (text: string): number => (text ? encode(text).length : 0);

const utf8 = new TextDecoder("utf-8");

/**
 * The text of token ids: their bytes decoded as UTF-8, a character cut off at the end (or any bytes
 * that are not UTF-8) as U+FFFD. Not gpt-tokenizer's `decode` (4.0.0): it decodes with one
 * TextDecoder for the whole process in streaming mode, so ids that end inside a character return
 * without it and the bytes held back come out at the start of the next `decode`, whichever text
 * that is (another job's, in a worker). Each call here stands alone.
 */
export function decodeTokens(ids: number[]): string {
  let text = "";
  let bytes: number[] = [];
  for (const id of ids) {
    const piece = ranks[id] ?? decodeSpecial([id]);
    if (typeof piece === "string") {
      if (bytes.length) [text, bytes] = [text + utf8.decode(Uint8Array.from(bytes)), []];
      text += piece;
    } else bytes.push(...piece);
  }
  return bytes.length ? text + utf8.decode(Uint8Array.from(bytes)) : text;
}
