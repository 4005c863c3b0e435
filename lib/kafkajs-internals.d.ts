/**
 * The part of kafkajs 2.2.4's internal request queue (src/network/requestQueue) that
 * lib/kafka-request-queue.ts replaces and its test drives; kafkajs ships no types for it.
 */
declare module "kafkajs/src/network/requestQueue/index.js" {
  interface QueuedRequest {
    entry: {
      correlationId: number;
      apiKey: number;
      apiName: string;
      apiVersion: number;
      resolve: (response: unknown) => void;
    };
    expectResponse: boolean;
    sendRequest: () => void;
  }
  export default class RequestQueue {
    constructor(options: {
      maxInFlightRequests?: number | null;
      requestTimeout: number;
      enforceRequestTimeout: boolean;
      clientId: string;
      broker: string;
      logger: { debug: (...args: unknown[]) => void };
    });
    pending: unknown[];
    throttledUntil: number;
    throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
    push(request: QueuedRequest): void;
    fulfillRequest(response: { correlationId: number; payload: unknown; size: number }): void;
    maybeThrottle(clientSideThrottleTime: number | null): void;
    checkPendingRequests(): void;
    scheduleCheckPendingRequests(): void;
    destroy(): void;
  }
}
