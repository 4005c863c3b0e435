import type { Producer } from "kafkajs";
import { TOPICS } from "../../topics";
import type { PublicationAnnouncement } from "../publication-announcement";

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
