import type { Kafka, Producer } from "kafkajs";
import type { Config } from "../config";
import type { Log } from "../log";
import type { Redis } from "../redis";
import type { WorkerPresence } from "./presence";

/** What a worker consumer gets from worker/index.ts: connected clients, shared by every consumer. */
export interface WorkerContext {
  config: Config;
  redis: Redis;
  kafka: Kafka;
  producer: Producer;
  log: Log;
  workerId: string;
  presence: WorkerPresence;
}

/** A running consumer; stop() finishes or hands back in-flight work, then leaves the group. */
export interface RunningConsumer {
  stop(graceMs?: number): Promise<void>;
}

export type StartConsumer = (ctx: WorkerContext) => Promise<RunningConsumer>;
