import RequestQueue from "kafkajs/src/network/requestQueue/index.js";

/** kafkajs's own interval for pending requests while a connection is busy or throttled. */
const CHECK_PENDING_MS = 10;

/**
 * Stops kafkajs 2.2.4's idle timer loop (tulios/kafkajs#1556, #1704; the Node 24 warning of
 * #1751 is its symptom). Every response makes a connection's request queue schedule a check of
 * its pending requests; with none pending and no throttle, the delay it computes is negative, so
 * the check runs after 1 ms, schedules the next and so on for as long as the connection lives: a
 * thousand timer callbacks a second per connection of every client, busy or idle (an idle web
 * process at 5.5 % of a core, all of it outside JavaScript). Upstream is unmaintained and its fix
 * unmerged, so Dispatch replaces the one method: a check is scheduled only while requests wait,
 * when the queue is not throttled after kafkajs's own 10 ms, otherwise when the throttle ends.
 * Nothing else waits on the timer: a new request that cannot go at once is queued and schedules
 * its check, and every response checks the queue at once.
 */
export function stopIdleRequestQueueLoop(): void {
  RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
}

function scheduleCheckPendingRequests(this: RequestQueue): void {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_MS,
  );
}
