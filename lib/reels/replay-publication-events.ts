import type { Redis } from "../redis";
import { replay } from "../stream/replay";
import type { StreamHub } from "../stream/stream-hub";
import type { PublicationEvent } from "./publication";
import { parseEvent, publicationKeys } from "./publication-record";
import { readEvents } from "./read-publication";
import { isSettledPublication } from "./status";

/**
 * A publication's timeline for one client (lib/stream/replay.ts): the events after `after`, then
 * live ones, up to a settled status (PUBLISHED, FAILED, TIMED_OUT). An earlier TIMED_OUT in the
 * stored timeline that a resume moved on from does not end it.
 */
export function replayPublicationEvents(
  deps: { redis: Redis; hub: StreamHub },
  publicationId: string,
  after: number,
  signal: AbortSignal,
): AsyncGenerator<PublicationEvent[]> {
  return replay(
    deps.hub,
    {
      channel: publicationKeys.stream(publicationId),
      parse: parseEvent,
      readStored: () => readEvents(deps.redis, publicationId),
      isEnd: (event) => isSettledPublication(event.status),
    },
    after,
    signal,
  );
}

/** `id: seq`, `event: step|poll` (PUBLICATION_EVENT_KINDS), and the event as data (the status it led to, the step or poll, what changed). */
export function publicationEventFrame(event: PublicationEvent): string {
  const { kind, ...data } = event;
  return `id: ${event.seq}\nevent: ${kind}\ndata: ${JSON.stringify(data)}\n\n`;
}
