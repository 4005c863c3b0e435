import "vitest";
import { rmSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import { startRedis, type RedisServer } from "../../scripts/lib/redis-server";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    kafkaBrokers: string;
  }
}

/** One real Redis and one real Kafka-protocol broker for the integration suite; tests use unique ids. */
export default async function setup(project: TestProject) {
  const dir = ".test-data/redis";
  rmSync(dir, { recursive: true, force: true });
  let redis: RedisServer | undefined;
  let broker: MockBroker | undefined;
  try {
    redis = await startRedis({ dir });
    broker = await startMockBroker();
  } catch (error) {
    await redis?.stop();
    throw error;
  }
  project.provide("redisUrl", redis.url);
  project.provide("kafkaBrokers", broker.bootstrap);
  return async () => {
    await broker?.stop();
    await redis?.stop();
  };
}
