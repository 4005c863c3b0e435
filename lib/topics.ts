import { jobAuditEventSchema } from "./jobs/audit-event";
import { generationCommandSchema } from "./jobs/command";
import { publicationAnnouncementSchema } from "./reels/publication-announcement";
import { publicationMessageSchema } from "./reels/publication-input";

/**
 * Every Kafka topic Dispatch uses, declared once with the schema of its payload (JSON): the web
 * side, the worker, the broker program and the tests import this, and the consumer kit parses each
 * message with its topic's schema before a handler sees it. The DLQ has none: it keeps what failed,
 * as it was.
 */
export const TOPICS = {
  requests: { name: "ai.generation.requests", partitions: 6, schema: generationCommandSchema },
  completed: { name: "ai.generation.completed", partitions: 6, schema: jobAuditEventSchema },
  dlq: { name: "ai.generation.requests.dlq", partitions: 1 },
  reels: { name: "reels.publish.requests", partitions: 6, schema: publicationMessageSchema },
  /** A publication's writes its owner hears of (settled, or waiting for a reconnect): webhooks read them. */
  reelEvents: { name: "reels.publication.events", partitions: 6, schema: publicationAnnouncementSchema },
} as const;

export const CONSUMER_GROUPS = {
  generation: "ai-generation-workers",
  reels: "reel-publish-workers",
  /** Reads ai.generation.completed to turn finished jobs into webhook deliveries. */
  webhooks: "webhook-event-workers",
  /** Reads reels.publication.events to turn publications' outcomes into webhook deliveries. */
  reelWebhooks: "webhook-reel-event-workers",
} as const;

/** What each consumer of a worker reads, in which group, under which name (the worker's presence and the system page use the name). */
export const SUBSCRIPTIONS = {
  generation: {
    name: "generation",
    groupId: CONSUMER_GROUPS.generation,
    topic: TOPICS.requests.name,
    schema: TOPICS.requests.schema,
  },
  reels: { name: "reels", groupId: CONSUMER_GROUPS.reels, topic: TOPICS.reels.name, schema: TOPICS.reels.schema },
  webhooks: {
    name: "webhooks",
    groupId: CONSUMER_GROUPS.webhooks,
    topic: TOPICS.completed.name,
    schema: TOPICS.completed.schema,
  },
  reelWebhooks: {
    name: "reel-webhooks",
    groupId: CONSUMER_GROUPS.reelWebhooks,
    topic: TOPICS.reelEvents.name,
    schema: TOPICS.reelEvents.schema,
  },
} as const;

export type TopicSpec = (typeof TOPICS)[keyof typeof TOPICS];
export const ALL_TOPICS: TopicSpec[] = Object.values(TOPICS);
