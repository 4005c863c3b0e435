/** Every Kafka topic Dispatch uses, declared once: the web side, the worker, the broker program and the tests import this. */
export const TOPICS = {
  requests: { name: "ai.generation.requests", partitions: 6 },
  completed: { name: "ai.generation.completed", partitions: 6 },
  dlq: { name: "ai.generation.requests.dlq", partitions: 1 },
  reels: { name: "reels.publish.requests", partitions: 6 },
} as const;

export const CONSUMER_GROUPS = {
  generation: "ai-generation-workers",
  reels: "reel-publish-workers",
  /** Reads ai.generation.completed to turn finished jobs into webhook deliveries. */
  webhooks: "webhook-event-workers",
} as const;

/** What each consumer of a worker reads, in which group, under which name (the worker's presence and the system page use the name). */
export const SUBSCRIPTIONS = {
  generation: { name: "generation", groupId: CONSUMER_GROUPS.generation, topic: TOPICS.requests.name },
  reels: { name: "reels", groupId: CONSUMER_GROUPS.reels, topic: TOPICS.reels.name },
  webhooks: { name: "webhooks", groupId: CONSUMER_GROUPS.webhooks, topic: TOPICS.completed.name },
} as const;

export type TopicSpec = (typeof TOPICS)[keyof typeof TOPICS];
export const ALL_TOPICS: TopicSpec[] = Object.values(TOPICS);
