import path from "node:path";
import type { Stack } from "./stack";

/** What `npm start` prints: an API key only when Dispatch generated it, never one an operator set. */
export function startBanner(
  stack: Pick<Stack, "url" | "host" | "apiKey" | "apiKeyGenerated" | "env" | "redis" | "broker" | "workers">,
): string {
  const tenants = [
    ...new Set(
      String(stack.env.API_KEYS)
        .split(",")
        .map((pair) => pair.trim().split(":")[0])
        .filter(Boolean),
    ),
  ];
  const embedded = [stack.redis && "Redis", stack.broker && "Kafka (librdkafka mock cluster)"]
    .filter(Boolean)
    .join(", ");
  const loopbackOnly = stack.host === "127.0.0.1" || stack.host === "::1" || stack.host === "localhost";
  return [
    "",
    `  Dispatch     ${stack.url}`,
    `  Listening on ${stack.host}${loopbackOnly ? " only (this machine; set HOST=0.0.0.0 to open it to the network)" : ""}`,
    stack.apiKeyGenerated
      ? `  API key      ${stack.apiKey}   (tenant ${tenants[0]}, generated, kept in ${path.join(String(stack.env.DATA_DIR), "api-keys")})`
      : `  Tenants      ${tenants.join(", ")}   (keys from API_KEYS, not shown)`,
    `  Redis        ${redactUrl(String(stack.env.REDIS_URL))}`,
    `  Kafka        ${stack.env.KAFKA_BROKERS}`,
    `  Workers      ${stack.workers.length}`,
    embedded ? `  Embedded     ${embedded}` : "",
    "",
    "ready",
    "",
  ].join("\n");
}

/** A Redis URL without its password. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return url;
  }
}
