import pino, { type Logger } from "pino";
import { logLevelSchema } from "./config";
import { activeTraceIds } from "./tracing";

/** How lib code logs: a level, a message and fields. Tests pass a function that collects them. */
export type Log = (level: "info" | "warn" | "error", message: string, fields?: Record<string, unknown>) => void;

const SECRET_FIELD = /token|key|secret|password|authorization/i;

let root: Logger | undefined;

/**
 * The process's one logger: JSON lines on stderr ({level, time, component, message, ...fields}),
 * written synchronously so the last lines before an exit are not lost. LOG_LEVEL is read here and
 * not from getConfig(), so a process whose configuration is invalid can still say so.
 */
function rootLogger(): Logger {
  root ??= pino(
    {
      level: logLevelSchema.catch("info").parse(process.env.LOG_LEVEL || undefined),
      base: undefined,
      messageKey: "message",
      timestamp: pino.stdTimeFunctions.isoTime,
      // Every line written inside a traced job carries its trace_id and span_id (none when tracing is off).
      mixin: activeTraceIds,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, fieldValue(k, v)])),
      },
    },
    pino.destination({ dest: 2, sync: true }),
  );
  return root;
}

/**
 * Fields whose names look secret are never written. An Error is written as its type, message and
 * stack (JSON.stringify would write `{}`), so a caller logs `{ error }` and the stack is kept; not
 * its other properties, which may hold a request and its token.
 */
function fieldValue(name: string, value: unknown): unknown {
  if (SECRET_FIELD.test(name)) return "[redacted]";
  return value instanceof Error ? { type: value.name, message: value.message, stack: value.stack } : value;
}

/** A logger for one part of the system (`web`, `worker:<id>`), as lib code takes it. */
export function createLog(component: string): Log {
  const logger = rootLogger().child({ component });
  return (level, message, fields = {}) => logger[level](fields, message);
}
