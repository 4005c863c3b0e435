import "vitest";
import { rmSync } from "node:fs";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { buildIfStale } from "../../scripts/lib/build";
import { startMockBroker, type MockBroker } from "../../scripts/lib/kafka-mock";
import { startRedis, type RedisServer } from "../../scripts/lib/redis-server";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
    kafkaBrokers: string;
  }
}

/**
 * One real Redis and one real Kafka-protocol broker for the integration suite; tests use unique ids.
 * The production build too, for the tests that run the app as `npm start` does (the end-to-end
 * suite after this one then finds it fresh).
 */
export default async function setup(project: TestProject) {
  buildIfStale(path.resolve(__dirname, "../.."));
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
