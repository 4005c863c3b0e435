import type { Producer } from "kafkajs";
import type { Redis } from "../../redis";
import { TOPICS } from "../../topics";
import { settledAnnouncement, type PublicationAnnouncement } from "../publication-announcement";
import type { PublicationRecord } from "../publication-record";
import { readPublicationAsOf } from "../read-publication";

/**
 * One message on reels.publication.events, keyed by tenant, acknowledged by the broker. A failure
 * throws: the run is tried again, finds the publication settled, and announces it then (a second
 * announcement makes no second webhook delivery: deliveries are named by the occurrence).
 */
export async function announcePublication(producer: Producer, announcement: PublicationAnnouncement): Promise<void> {
  await producer.send({
    topic: TOPICS.reelEvents.name,
    acks: -1,
    messages: [{ key: announcement.tenant_id, value: JSON.stringify(announcement) }],
  });
}

/** Announces a settled publication as `record` (its final write's) shows it, with its timeline up to that write. */
export async function announceSettled(producer: Producer, redis: Redis, record: PublicationRecord): Promise<void> {
  await announcePublication(producer, settledAnnouncement(await readPublicationAsOf(redis, record)));
}
