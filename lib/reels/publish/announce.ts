import type { Producer } from "kafkajs";
import type { Redis } from "../../redis";
import { TOPICS } from "../../topics";
import { settledAnnouncement, type PublicationAnnouncement } from "../publication-announcement";
import { publicationKeys, type PublicationRecord } from "../publication-record";
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

/** A settled publication's announcement, as `record` (its final write's) shows it, with its timeline up to that write. */
export async function settledAnnouncementOf(redis: Redis, record: PublicationRecord): Promise<PublicationAnnouncement> {
  return settledAnnouncement(await readPublicationAsOf(redis, record));
}

// Marks the publication's settled write announced, while the record still holds that write.
// KEYS: the record. ARGV: the write's updated_at.
const MARK_ANNOUNCED = `
if redis.call('HGET', KEYS[1], 'updated_at') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'announced', ARGV[1])
return 1`;

/**
 * Announces a settled publication, then marks the write announced, so a retry or a resume knows
 * whether it must announce it itself (retry-publication.ts). A crash between the two announces it
 * twice: the webhook consumer drops the repeat (same occurrence).
 */
export async function announceSettled(producer: Producer, redis: Redis, record: PublicationRecord): Promise<void> {
  await announcePublication(producer, await settledAnnouncementOf(redis, record));
  await markAnnounced(redis, record);
}

/** Whether the record's settled write was announced (marked after its announcement). */
export function isAnnounced(record: PublicationRecord): boolean {
  return record.announced !== "" && record.announced === record.updated_at;
}

export async function markAnnounced(redis: Redis, record: PublicationRecord): Promise<void> {
  await redis.eval(MARK_ANNOUNCED, 1, publicationKeys.state(record.publication_id), record.updated_at);
}
