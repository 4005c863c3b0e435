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
        // Fields whose names look secret are never written.
        log: (fields) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, SECRET_FIELD.test(k) ? "[redacted]" : v])),
      },
    },
    pino.destination({ dest: 2, sync: true }),
  );
  return root;
}

/** A logger for one part of the system (`web`, `worker:<id>`), as lib code takes it. */
export function createLog(component: string): Log {
  const logger = rootLogger().child({ component });
  return (level, message, fields = {}) => logger[level](fields, message);
}
