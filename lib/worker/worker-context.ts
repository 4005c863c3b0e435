import type { WorkerClients } from "./worker-clients";
import type { WorkerServices } from "./services";

/** What a worker consumer or schedule gets from worker/index.ts: its connected clients, and the services. */
export interface WorkerContext extends WorkerClients {
  /** What the consumers and schedules share, built once per process (lib/worker/services.ts). */
  services: WorkerServices;
}

/** A running consumer; stop() finishes or hands back in-flight work, then leaves the group. */
export interface RunningConsumer {
  stop(graceMs?: number): Promise<void>;
}

export type StartConsumer = (ctx: WorkerContext) => Promise<RunningConsumer>;

/** A running schedule (work on a timer, no topic); stop() clears its timer and lets the tick in progress end. */
export interface RunningSchedule {
  stop(): Promise<void>;
}

export type StartSchedule = (ctx: WorkerContext) => Promise<RunningSchedule>;
