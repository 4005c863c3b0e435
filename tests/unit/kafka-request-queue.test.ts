import { createRequire } from "node:module";
import RequestQueue from "kafkajs/src/network/requestQueue/index.js";
import { afterEach, describe, expect, it } from "vitest";
import { stopIdleRequestQueueLoop } from "@/lib/kafka-request-queue";
import { waitFor } from "../helpers";

const queues: RequestQueue[] = [];

/** A fresh copy of kafkajs's module, as shipped: another test file may have loaded lib/kafka, which changes the one everybody shares. */
function shippedRequestQueue(): typeof RequestQueue {
  const require = createRequire(import.meta.url);
  const id = require.resolve("kafkajs/src/network/requestQueue/index.js");
  const shared = require.cache[id];
  delete require.cache[id];
  try {
    return require(id) as typeof RequestQueue;
  } finally {
    require.cache[id] = shared;
  }
}

function queue(maxInFlightRequests: number | null = null, Queue = RequestQueue): RequestQueue {
  const q = new Queue({
    maxInFlightRequests,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: "test",
    broker: "localhost:9092",
    logger: { debug: () => {} },
  });
  queues.push(q);
  return q;
}

/** A request on `q` that records when it went out; `reply` answers it. */
function request(q: RequestQueue, correlationId: number, sent: { id: number; at: number }[]) {
  q.push({
    entry: { correlationId, apiKey: 1, apiName: "Fetch", apiVersion: 11, resolve: () => {} },
    expectResponse: true,
    sendRequest: () => sent.push({ id: correlationId, at: Date.now() }),
  });
  return { reply: () => q.fulfillRequest({ correlationId, payload: null, size: 0 }) };
}

/** Counts `q`'s checks of its pending requests from now on. */
function countChecks(q: RequestQueue): () => number {
  let checks = 0;
  const check = q.checkPendingRequests.bind(q);
  q.checkPendingRequests = () => {
    checks++;
    check();
  };
  return () => checks;
}

afterEach(() => {
  for (const q of queues.splice(0)) {
    q.destroy();
    q.pending.length = 0;
  }
});

describe("kafkajs's request queue", () => {
  it("as shipped, checks an empty queue every millisecond after a response, for good (the loop this replaces)", async () => {
    const q = queue(null, shippedRequestQueue());
    request(q, 1, []).reply();
    const checks = countChecks(q);
    // Nothing is pending and nothing will be: the checks go on by themselves (every 1 ms; a busy machine waits longer for them).
    await waitFor(() => checks() > 20, { timeoutMs: 10_000, intervalMs: 10, what: "kafkajs's idle checks" });
    expect(checks()).toBeGreaterThan(20);
  });

  describe("with the idle loop stopped", () => {
    it("leaves an empty queue alone after a response", async () => {
      stopIdleRequestQueueLoop();
      const q = queue();
      const sent: { id: number; at: number }[] = [];
      request(q, 1, sent).reply();
      expect(q.throttleCheckTimeoutId).toBeNull();
      const checks = countChecks(q);
      await new Promise((resolve) => setTimeout(resolve, 200)); // kafkajs's loop would check ~200 times
      expect(checks()).toBe(0);
      expect(sent.map((s) => s.id)).toEqual([1]);
    });

    it("sends a request held back by the in-flight limit when the one before it is answered", async () => {
      stopIdleRequestQueueLoop();
      const q = queue(1);
      const sent: { id: number; at: number }[] = [];
      const first = request(q, 1, sent);
      request(q, 2, sent);
      expect(sent.map((s) => s.id)).toEqual([1]);
      first.reply();
      expect(sent.map((s) => s.id)).toEqual([1, 2]);
    });

    it("sends requests queued while throttled once the throttle ends, not before", async () => {
      stopIdleRequestQueueLoop();
      const q = queue();
      const sent: { id: number; at: number }[] = [];
      request(q, 1, sent).reply();
      q.maybeThrottle(60);
      const until = q.throttledUntil;
      request(q, 2, sent);
      request(q, 3, sent);
      expect(sent.map((s) => s.id)).toEqual([1]);
      await waitFor(() => sent.length === 3, { timeoutMs: 10_000 });
      expect(sent.map((s) => s.id)).toEqual([1, 2, 3]);
      for (const s of sent.slice(1)) expect(s.at).toBeGreaterThanOrEqual(until);
      expect(q.throttleCheckTimeoutId).toBeNull();
    });
  });
});
