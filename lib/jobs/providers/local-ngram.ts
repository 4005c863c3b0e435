import { readFileSync, readdirSync, existsSync } from "node:fs";
import path from "node:path";
import { decodeTokens, encodeTokens } from "../tokens";
import { abortableSleep } from "../../sleep";
import { CandidateSpread, type Counts } from "./candidate-spread";
import type { GenerationChunk, GenerationRequest, Provider } from "./provider";

/**
 * `local-ngram`: a trigram language model over BPE tokens with back-off to bigrams and unigrams.
 * It is trained at start-up on the text Dispatch ships (its own docs) and, per job, on the prompt,
 * which it weighs more. It is small and honest: it continues text in the style of what it read,
 * it does not follow instructions.
 */
const END = -1;
const PROMPT_WEIGHT = 3;
/**
 * Tokens said before the end of a paragraph may end the text. A prompt that is itself a whole
 * sentence ("Write two sentences about lighthouses.") is often followed by a paragraph end in the
 * corpus; without this floor such a job completed with no output at all.
 */
export const MIN_TOKENS = 16;

class NgramTable {
  readonly unigrams: Counts = new Map();
  readonly bigrams = new Map<number, Counts>();
  readonly trigrams = new Map<string, Counts>();

  add(tokens: number[], weight: number): void {
    for (let i = 0; i < tokens.length; i++) {
      const next = tokens[i];
      bump(this.unigrams, next, weight);
      if (i >= 1) bump(child(this.bigrams, tokens[i - 1]), next, weight);
      if (i >= 2) bump(child(this.trigrams, `${tokens[i - 2]},${tokens[i - 1]}`), next, weight);
    }
  }
}

function bump(counts: Counts, token: number, weight: number) {
  counts.set(token, (counts.get(token) ?? 0) + weight);
}
function child<K>(map: Map<K, Counts>, key: K): Counts {
  let counts = map.get(key);
  if (!counts) map.set(key, (counts = new Map()));
  return counts;
}

/** Paragraphs become token sequences that end with END, so the model learns where text stops. */
function paragraphs(text: string): number[][] {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .map((p) => [...encodeTokens(p), END]);
}

export function trainNgram(texts: string[]): NgramTable {
  const table = new NgramTable();
  for (const text of texts) for (const tokens of paragraphs(text)) table.add(tokens, 1);
  return table;
}

/** The project's own docs: README.md and docs/*.md next to the running code. */
export function readShippedCorpus(root = process.cwd()): string[] {
  const files = [path.join(root, "README.md")];
  const docs = path.join(root, "docs");
  if (existsSync(docs)) for (const f of readdirSync(docs).sort()) if (f.endsWith(".md")) files.push(path.join(docs, f));
  return files.filter((f) => existsSync(f)).map((f) => readFileSync(f, "utf8"));
}

/** Picks the next token from weighted counts at a temperature; 0 is greedy. */
export function sampleToken(candidates: Counts[], temperature: number, random: () => number): number {
  const merged: Counts = new Map();
  for (const counts of candidates) for (const [token, n] of counts) bump(merged, token, n);
  if (merged.size === 0) return END;
  if (temperature <= 0) {
    let best = END;
    let bestCount = -1;
    for (const [token, n] of merged) if (n > bestCount) [best, bestCount] = [token, n];
    return best;
  }
  const weights: [number, number][] = [];
  let total = 0;
  for (const [token, n] of merged) {
    const w = Math.pow(n, 1 / temperature);
    weights.push([token, w]);
    total += w;
  }
  let r = random() * total;
  for (const [token, w] of weights) if ((r -= w) <= 0) return token;
  return weights[weights.length - 1][0];
}

export interface LocalNgramOptions {
  corpus: string[];
  tokensPerSecond: number;
  random?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export function createLocalNgram(options: LocalNgramOptions): Provider {
  const base = trainNgram(options.corpus);
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  const interval = 1000 / options.tokensPerSecond;

  return {
    async *generate(request: GenerationRequest): AsyncIterable<GenerationChunk> {
      const promptTokens = encodeTokens(request.prompt);
      const local = new NgramTable();
      local.add(promptTokens, PROMPT_WEIGHT);
      const context = [...promptTokens];
      // Tokens not yet sent: those since the last whole character.
      let pending: number[] = [];
      let saidSomething = false;
      const started = Date.now();
      const minTokens = Math.min(MIN_TOKENS, request.maxTokens);
      let ended = false;
      let generated = 0;
      for (let i = 0; i < request.maxTokens; i++) {
        request.signal.throwIfAborted();
        // Until it has said something visible, neither the end nor a whitespace-only token.
        const allowed = i >= minTokens ? undefined : saidSomething ? notEnd : visible;
        const token = nextToken(context, base, local, request.temperature, random, allowed);
        if (token === END) {
          ended = true;
          break;
        }
        generated++;
        context.push(token);
        pending.push(token);
        // A character split across tokens is sent whole, once, with the token that completes it.
        const delta = decodeTokens(pending);
        if (delta.endsWith("\uFFFD")) continue;
        pending = [];
        saidSomething ||= delta.trim() !== "";
        const due = started + (i + 1) * interval - Date.now();
        if (due > 0) await sleep(due, request.signal);
        if (delta) yield { delta };
      }
      // max_tokens cut a character in two: say what was generated rather than nothing.
      const rest = decodeTokens(pending);
      if (rest) yield { delta: rest };
      // As a served model does: the tokens it read and made, so the worker need not encode both again.
      yield { usage: { prompt_tokens: promptTokens.length, completion_tokens: generated } };
      yield { finish_reason: ended ? "stop" : "length" };
    },
  };
}

const notEnd = (token: number) => token !== END;
const visibleTokens = new Map<number, boolean>();
const visible = (token: number) => {
  if (token === END) return false;
  let seen = visibleTokens.get(token);
  // A piece of a character (it decodes to U+FFFD alone) is not visible: text must not start with half a character.
  if (seen === undefined) visibleTokens.set(token, (seen = /^[^\s\uFFFD]/.test(decodeTokens([token]).trim())));
  return seen;
};

/** The next token, backing off from trigrams to bigrams to unigrams, among the `allowed` ones when given. */
function nextToken(
  context: number[],
  base: NgramTable,
  local: NgramTable,
  temperature: number,
  random: () => number,
  allowed?: Allowed,
): number {
  const n = context.length;
  if (n >= 2) {
    const key = `${context[n - 2]},${context[n - 1]}`;
    const token = pick(base.trigrams.get(key), local.trigrams.get(key), temperature, random, allowed);
    if (token !== undefined) return token;
  }
  if (n >= 1) {
    const token = pick(
      base.bigrams.get(context[n - 1]),
      local.bigrams.get(context[n - 1]),
      temperature,
      random,
      allowed,
    );
    if (token !== undefined) return token;
  }
  return pick(base.unigrams, local.unigrams, temperature, random, allowed) ?? END;
}

type Allowed = (token: number) => boolean;

/** A token from one context's counts in the corpus and in the prompt, or undefined when neither has an allowed one. */
function pick(
  base: Counts | undefined,
  local: Counts | undefined,
  temperature: number,
  random: () => number,
  allowed?: Allowed,
): number | undefined {
  const prompt = narrow(local, allowed);
  if (base && base.size >= SPREAD_MIN_CANDIDATES) {
    const spread = spreadOf(base, allowed, temperature);
    if (spread.size) return spread.sample(prompt, temperature, random);
    return prompt && sampleToken([prompt], temperature, random);
  }
  const found = [narrow(base, allowed), prompt].filter((c): c is Counts => !!c);
  return found.length ? sampleToken(found, temperature, random) : undefined;
}

function narrow(counts: Counts | undefined, allowed?: Allowed): Counts | undefined {
  if (!counts || !allowed) return counts;
  const kept: Counts = new Map([...counts].filter(([token]) => allowed(token)));
  return kept.size ? kept : undefined;
}

/** Below this many candidates merging the maps per token is cheap; above it a context's spread is kept. */
const SPREAD_MIN_CANDIDATES = 32;
/** Spreads kept per context: one per filter and temperature in recent use. */
const SPREADS_PER_CONTEXT = 8;
const spreads = new WeakMap<Counts, Map<string, CandidateSpread>>();
const filterNames = new Map<Allowed | undefined, string>([
  [undefined, "any"],
  [notEnd, "not-end"],
  [visible, "visible"],
]);

function spreadOf(counts: Counts, allowed: Allowed | undefined, temperature: number): CandidateSpread {
  let byKey = spreads.get(counts);
  if (!byKey) spreads.set(counts, (byKey = new Map()));
  const key = `${filterNames.get(allowed)}:${Math.max(temperature, 0)}`;
  let spread = byKey.get(key);
  if (!spread) {
    if (byKey.size >= SPREADS_PER_CONTEXT) byKey.delete(byKey.keys().next().value!);
    byKey.set(key, (spread = new CandidateSpread(counts, allowed, temperature)));
  }
  return spread;
}
