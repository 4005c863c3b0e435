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
} as const;

export type TopicSpec = (typeof TOPICS)[keyof typeof TOPICS];
export const ALL_TOPICS: TopicSpec[] = Object.values(TOPICS);
