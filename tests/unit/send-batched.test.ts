import type { Message, Producer, ProducerRecord } from "kafkajs";
import { describe, expect, it } from "vitest";
import { sendBatched } from "@/lib/accept/send-batched";
import { waitFor } from "../helpers";

/** A producer whose requests are answered when the test says: each request's messages, and its answer. */
function heldProducer() {
  const requests: { messages: Message[]; answer: (error?: Error) => void }[] = [];
  const producer = {
    send: (record: ProducerRecord) =>
      new Promise((resolve, reject) =>
        requests.push({ messages: record.messages, answer: (error) => (error ? reject(error) : resolve([])) }),
      ),
  } as unknown as Producer;
  return { producer, requests };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const values = (messages: Message[]) => messages.map((m) => m.value);

describe("sendBatched", () => {
  it("sends the messages of one turn in one request, and each turn's own request at once", async () => {
    const { producer, requests } = heldProducer();
    const first = [sendBatched(producer, "t", { value: "a" }), sendBatched(producer, "t", { value: "b" })];
    await nextTurn();
    const second = sendBatched(producer, "t", { value: "c" });
    await waitFor(() => requests.length === 2, { what: "a request per turn, the first unanswered" });
    expect(requests.map((r) => values(r.messages))).toEqual([["a", "b"], ["c"]]);
    requests.forEach((r) => r.answer());
    await Promise.all([...first, second]);
  });
});
