import type { StreamHub } from "../jobs/stream-hub";
import type { Redis } from "../redis";
import { isSettled, parseEvent, publicationKeys, readEvents, type PublicationEvent } from "./publication";

/**
 * A publication's timeline for one client: the events it missed (after `after`), then the live
 * ones, with no gap and no duplicate (it subscribes before reading the list and drops live events
 * it already sent). Ends at a settled status (PUBLISHED, FAILED, TIMED_OUT); an earlier TIMED_OUT
 * that a resume moved on from does not end the replay.
 */
export async function* replayPublicationEvents(
  deps: { redis: Redis; hub: StreamHub },
  publicationId: string,
  after: number,
  signal: AbortSignal,
): AsyncGenerator<PublicationEvent[]> {
  let queue: PublicationEvent[] = [];
  let wake: (() => void) | undefined;
  const onMessage = (event: PublicationEvent) => {
    queue.push(event);
    wake?.();
  };
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort);
  const unsubscribe = await deps.hub.subscribe(publicationKeys.stream(publicationId), onMessage, parseEvent);
  try {
    const stored = await readEvents(deps.redis, publicationId);
    const missed = stored.filter((event) => event.seq > after);
    if (missed.length > 0) yield missed;
    let lastSeq = missed.at(-1)?.seq ?? after;
    const last = stored[stored.length - 1];
    if (last && isSettled(last.status)) return;
    while (!signal.aborted) {
      if (queue.length === 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      const batch: PublicationEvent[] = [];
      for (const event of queue) {
        if (event.seq <= lastSeq) continue;
        batch.push(event);
        lastSeq = event.seq;
        if (isSettled(event.status)) break;
      }
      queue = [];
      if (batch.length > 0) yield batch;
      const end = batch.at(-1);
      if (end && isSettled(end.status)) return;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    await unsubscribe();
  }
}

/** `id: seq`, `event: step|poll`, and the event as data (the status it led to, the step or poll, what changed). */
export function publicationEventFrame(event: PublicationEvent): string {
  const { kind, ...data } = event;
  return `id: ${event.seq}\nevent: ${kind}\ndata: ${JSON.stringify(data)}\n\n`;
}
