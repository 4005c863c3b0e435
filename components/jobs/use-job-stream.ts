"use client";

import { useEffect, useReducer, useRef } from "react";
import type { FinishReason, JobStatus } from "@/lib/jobs/status";
import type { StreamMessage } from "@/lib/jobs/stream-message";

export type StreamPhase = "idle" | "connecting" | "live" | "reconnecting" | "done" | "failed";

export interface StreamState {
  text: string;
  /** The highest seq applied: a replayed or repeated event at or below it is ignored. */
  lastSeq: number;
  phase: StreamPhase;
  deltas: number;
  finalStatus?: JobStatus;
  finishReason?: FinishReason;
  /** When the stream first connected and when this page received the first text (Date.now()). */
  connectedAt?: number;
  firstTextAt?: number;
  attempt?: number;
}

export type Action =
  | {
      type: "delta";
      seq: number;
      delta: string;
      /** The model's deltas the message joins (more than one when the worker was behind). */
      count: number;
      isFinal: boolean;
      status?: JobStatus;
      finishReason?: FinishReason;
      at: number;
    }
  | { type: "reset"; seq: number; attempt?: number }
  | { type: "phase"; phase: StreamPhase; at?: number };

/** The stream's state after one event (exported for its tests): `deltas` counts the model's deltas, not messages. */
export function reduceJobStream(state: StreamState, action: Action): StreamState {
  switch (action.type) {
    case "phase":
      if (state.phase === "done") return state;
      return {
        ...state,
        phase: action.phase,
        connectedAt: state.connectedAt ?? (action.phase === "live" ? action.at : undefined),
      };
    case "reset":
      if (action.seq <= state.lastSeq) return state;
      return { ...state, text: "", deltas: 0, lastSeq: action.seq, attempt: action.attempt, firstTextAt: undefined };
    case "delta":
      if (action.seq <= state.lastSeq) return state;
      return {
        ...state,
        text: state.text + action.delta,
        deltas: state.deltas + (action.delta ? action.count : 0),
        lastSeq: action.seq,
        phase: action.isFinal ? "done" : "live",
        finalStatus: action.isFinal ? (action.status ?? "COMPLETED") : state.finalStatus,
        finishReason: action.isFinal ? action.finishReason : state.finishReason,
        firstTextAt: state.firstTextAt ?? (action.delta ? action.at : undefined),
      };
  }
}

const RETRY_MS = [500, 1000, 2000, 4000, 8000];

/**
 * A job's tokens as they are generated, over EventSource. The browser's own reconnect resends
 * Last-Event-ID so the server resumes after the last delta; if the stream is closed for good (an
 * HTTP error), it is opened again with ?after=<last seq>. Either way a seq seen before is dropped,
 * so the text never repeats; a `reset` (a new attempt) clears it.
 */
export function useJobStream(
  jobId: string,
  wanted: boolean,
  onFinal?: (status: JobStatus, finishReason?: FinishReason) => void,
) {
  const [state, dispatch] = useReducer(reduceJobStream, { text: "", lastSeq: 0, phase: "idle", deltas: 0 });
  // Once text has arrived the stream stays open until its final message, even if a refetch saw the job end first.
  const enabled = wanted || (state.lastSeq > 0 && state.phase !== "done" && state.phase !== "failed");
  const lastSeq = useRef(0);
  const onFinalRef = useRef(onFinal);
  useEffect(() => {
    onFinalRef.current = onFinal;
  });

  useEffect(() => {
    if (!enabled) return;
    let source: EventSource | undefined;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let failures = 0;
    let finished = false;

    const open = () => {
      dispatch({ type: "phase", phase: lastSeq.current > 0 ? "reconnecting" : "connecting" });
      const url = `/v1/jobs/${encodeURIComponent(jobId)}/stream${lastSeq.current > 0 ? `?after=${lastSeq.current}` : ""}`;
      const es = new EventSource(url);
      source = es;
      es.onopen = () => {
        failures = 0;
        dispatch({ type: "phase", phase: "live", at: Date.now() });
      };
      es.addEventListener("delta", (event) => {
        const seq = Number(event.lastEventId);
        // The SSE frame carries the stream message without its seq (that is the event id).
        const data = JSON.parse(event.data) as Omit<StreamMessage, "seq">;
        if (seq > lastSeq.current) lastSeq.current = seq;
        dispatch({
          type: "delta",
          seq,
          delta: data.delta,
          count: data.deltas ?? 1,
          isFinal: data.is_final,
          status: data.status,
          finishReason: data.finish_reason,
          at: Date.now(),
        });
        if (data.is_final) {
          finished = true;
          es.close();
          onFinalRef.current?.(data.status ?? "COMPLETED", data.finish_reason);
        }
      });
      es.addEventListener("reset", (event) => {
        const seq = Number(event.lastEventId);
        const data = JSON.parse(event.data) as Omit<StreamMessage, "seq">;
        if (seq > lastSeq.current) lastSeq.current = seq;
        dispatch({ type: "reset", seq, attempt: data.attempt });
      });
      es.onerror = () => {
        if (finished) return;
        if (es.readyState === EventSource.CONNECTING) {
          dispatch({ type: "phase", phase: "reconnecting" });
          return;
        }
        // Closed for good (e.g. an HTTP error answer): try again ourselves, resuming after the last seq.
        es.close();
        if (failures >= RETRY_MS.length) {
          dispatch({ type: "phase", phase: "failed" });
          return;
        }
        dispatch({ type: "phase", phase: "reconnecting" });
        retryTimer = setTimeout(open, RETRY_MS[failures++]);
      };
    };

    open();
    return () => {
      finished = true;
      clearTimeout(retryTimer);
      source?.close();
    };
  }, [jobId, enabled]);

  return state;
}
