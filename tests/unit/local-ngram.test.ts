import { describe, expect, it } from "vitest";
import { createLocalNgram, MIN_TOKENS, readShippedCorpus, sampleToken } from "@/lib/jobs/providers/local-ngram";
import { countTokens } from "@/lib/jobs/tokens";
import type { GenerationChunk } from "@/lib/jobs/providers/provider";

const corpus = ["The broker keeps the log.\n\nThe worker reads the log and writes tokens.\n\nClients read the stream."];
const noWait = async () => {};
/** A seeded generator (Lehmer), so a failing seed can be replayed. */
function seeded(seed: number) {
  let state = seed;
  return () => (state = (state * 48271) % 2147483647) / 2147483647;
}

async function run(
  options: { prompt: string; temperature: number; maxTokens: number },
  seed = 1,
  model = createLocalNgram({ corpus, tokensPerSecond: 1000, sleep: noWait, random: seeded(seed) }),
) {
  const deltas: string[] = [];
  for await (const chunk of model.generate({
    model: "local-ngram",
    ...options,
    signal: new AbortController().signal,
  }) as AsyncIterable<GenerationChunk>) {
    if ("delta" in chunk) deltas.push(chunk.delta);
  }
  return deltas;
}

describe("local-ngram", () => {
  it("continues text in the style of what it read, and is deterministic at temperature 0", async () => {
    const a = await run({ prompt: "The worker", temperature: 0, maxTokens: 50 });
    const b = await run({ prompt: "The worker", temperature: 0, maxTokens: 50 }, 99);
    expect(a.join("")).toBe(b.join(""));
    expect(a.join("")).toMatch(/^ reads the log/);
  });

  it("stops at max_tokens, counted with the BPE tokenizer", async () => {
    const deltas = await run({ prompt: "The", temperature: 1.5, maxTokens: 5 });
    expect(countTokens(deltas.join(""))).toBeLessThanOrEqual(6);
    expect(deltas.length).toBeLessThanOrEqual(5);
  });

  it("stops at a natural end (the end of a paragraph), once it has said MIN_TOKENS", async () => {
    const text = (await run({ prompt: "Clients read the", temperature: 0, maxTokens: 500 })).join("");
    expect(text).toMatch(/^ stream\./);
    expect(countTokens(text)).toBeGreaterThanOrEqual(MIN_TOKENS);
    expect(countTokens(text)).toBeLessThan(500);
  });

  it("says why it stopped: length at max_tokens, stop at a natural end, as the last chunk", async () => {
    const lastChunk = async (options: { prompt: string; temperature: number; maxTokens: number }) => {
      const model = createLocalNgram({ corpus, tokensPerSecond: 1000, sleep: noWait, random: seeded(1) });
      const chunks: GenerationChunk[] = [];
      for await (const chunk of model.generate({
        model: "local-ngram",
        ...options,
        signal: new AbortController().signal,
      }))
        chunks.push(chunk);
      return chunks.at(-1);
    };
    expect(await lastChunk({ prompt: "The", temperature: 1.5, maxTokens: 5 })).toEqual({ finish_reason: "length" });
    expect(await lastChunk({ prompt: "Clients read the", temperature: 0, maxTokens: 500 })).toEqual({
      finish_reason: "stop",
    });
  });

  it("reports its usage before the finish: the prompt's tokens and the tokens it made", async () => {
    const model = createLocalNgram({ corpus, tokensPerSecond: 1000, sleep: noWait, random: seeded(3) });
    const chunks: GenerationChunk[] = [];
    const prompt = "The worker reads";
    for await (const chunk of model.generate({
      model: "local-ngram",
      prompt,
      temperature: 1.5,
      maxTokens: 7,
      signal: new AbortController().signal,
    }))
      chunks.push(chunk);
    expect(chunks.at(-1)).toEqual({ finish_reason: "length" });
    expect(chunks.at(-2)).toEqual({ usage: { prompt_tokens: countTokens(prompt), completion_tokens: 7 } });
    expect(chunks.filter((c) => "usage" in c)).toHaveLength(1);
  });

  it("never completes empty: over many prompts, seeds and temperatures on the shipped corpus", async () => {
    // A whole sentence as the prompt is where the corpus most often ends a paragraph.
    const prompts = [
      "Write two sentences about lighthouses.",
      "Hello.",
      "What is Dispatch?",
      "The worker",
      "Summarise the README.",
      "ok",
      "1.",
      "Ctrl-C stops every process it started.",
    ];
    let random = seeded(1);
    const shipped = createLocalNgram({
      corpus: readShippedCorpus(),
      tokensPerSecond: 1000,
      sleep: noWait,
      random: () => random(),
    });
    const failures: string[] = [];
    for (const prompt of prompts) {
      for (const temperature of [0, 0.2, 0.7, 1.2]) {
        for (const maxTokens of [1, 2, 5, 120]) {
          for (let seed = 1; seed <= (temperature === 0 ? 1 : 6); seed++) {
            random = seeded(seed * 7919);
            const text = (await run({ prompt, temperature, maxTokens }, seed, shipped)).join("");
            const tokens = countTokens(text);
            if (!text.trim() || tokens < Math.min(maxTokens, MIN_TOKENS))
              failures.push(
                `${JSON.stringify(prompt)} t=${temperature} max=${maxTokens} seed=${seed}: ${JSON.stringify(text)} (${tokens} tokens)`,
              );
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("samples by temperature: greedy at 0, spread when hot", () => {
    const counts = new Map([
      [1, 9],
      [2, 1],
    ]);
    expect(sampleToken([counts], 0, Math.random)).toBe(1);
    const picks = new Set(Array.from({ length: 200 }, (_, i) => sampleToken([counts], 2, () => (i + 0.5) / 200)));
    expect(picks).toEqual(new Set([1, 2]));
  });

  it("stops when aborted", async () => {
    const model = createLocalNgram({ corpus, tokensPerSecond: 1000, sleep: noWait });
    const controller = new AbortController();
    controller.abort(new Error("cancelled"));
    const iterator = model
      .generate({ model: "local-ngram", prompt: "The", temperature: 1, maxTokens: 10, signal: controller.signal })
      [Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toThrow("cancelled");
  });
});
