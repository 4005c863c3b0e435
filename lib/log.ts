import type { Log } from "./kafka";

const SECRET_FIELD = /token|key|secret|password|authorization/i;

/** One JSON line per event on stderr; fields whose names look secret are never written. */
export function createLog(component: string): Log {
  return (level, message, fields = {}) => {
    const safe = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, SECRET_FIELD.test(k) ? "[redacted]" : v]));
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, component, message, ...safe })}\n`);
  };
}

export type { Log };
