import type { Message, Producer } from "kafkajs";

/** A produce request stays well under a broker's default limit on a record batch (1 MiB). */
const BATCH_MAX_BYTES = 512 * 1024;

/**
 * Messages for one topic accepted in the same turn of the event loop go to the broker in one
 * produce request (acks -1). Under a burst that is one encoding and one acknowledgement for many
 * submissions instead of one each, and each partition gets one record batch, which a worker then
 * fetches and works through in one go. Each caller still resolves only once the broker
 * acknowledged the request holding its own message, and each of them sees its failure.
 */
export function sendBatched(producer: Producer, topic: string, message: Message & { value: string }): Promise<void> {
  let byTopic = batchers.get(producer);
  if (!byTopic) batchers.set(producer, (byTopic = new Map()));
  let batcher = byTopic.get(topic);
  if (!batcher) byTopic.set(topic, (batcher = new Batcher(producer, topic)));
  return batcher.send(message);
}

const batchers = new WeakMap<Producer, Map<string, Batcher>>();

interface OpenBatch {
  messages: Message[];
  bytes: number;
  sent: Promise<void>;
}

class Batcher {
  private open: OpenBatch | undefined;

  constructor(
    private readonly producer: Producer,
    private readonly topic: string,
  ) {}

  send(message: Message & { value: string }): Promise<void> {
    const bytes = Buffer.byteLength(message.value);
    if (this.open && this.open.bytes + bytes > BATCH_MAX_BYTES) this.open = undefined; // full: it goes as it is
    const batch = (this.open ??= this.start());
    batch.messages.push(message);
    batch.bytes += bytes;
    return batch.sent;
  }

  private start(): OpenBatch {
    const batch: OpenBatch = { messages: [], bytes: 0, sent: Promise.resolve() };
    batch.sent = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      if (this.open === batch) this.open = undefined;
      await this.producer.send({ topic: this.topic, acks: -1, messages: batch.messages });
    });
    return batch;
  }
}
