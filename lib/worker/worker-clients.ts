import type { Kafka, Producer } from "kafkajs";
import type { Config } from "../config";
import type { Log } from "../log";
import type { Redis } from "../redis";
import type { WorkerPresence } from "./presence";

/**
 * The worker's connected clients, shared by every consumer and schedule: what the generic kits
 * (lib/consume, the operations port) take. Apart from WorkerContext so that those kits do not
 * reach, even by a type, the features the services are built from (lib/worker/services.ts).
 */
export interface WorkerClients {
  config: Config;
  redis: Redis;
  kafka: Kafka;
  producer: Producer;
  log: Log;
  workerId: string;
  presence: WorkerPresence;
}
