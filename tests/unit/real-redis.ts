import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { afterAll, beforeAll } from "vitest";
import { createRedis, type Redis } from "@/lib/redis";
import { startRedis, type RedisServer } from "@/scripts/lib/redis-server";

/** A redis-server of the calling test file's own, up for its tests and removed after them; returns its client. */
export function realRedisPerFile(): () => Redis {
  const dir = `.test-data/unit-redis-${randomUUID().slice(0, 8)}`;
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis({ dir });
    client = createRedis(server.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return () => client!;
}
