import { createHash } from "node:crypto";
import type { Redis } from "./redis";

/** A Lua script sent by its SHA1 (EVALSHA), its text only when Redis does not have it yet. */
export interface RedisScript {
  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/**
 * EVAL sends a script's whole text with every call, and the hot path (a lease, a slot, a job's
 * start) runs several per job: EVALSHA sends 40 characters instead. A Redis that does not know the
 * script (new, restarted, flushed) answers NOSCRIPT, and that one call goes as EVAL, which caches it.
 */
export function redisScript(lua: string): RedisScript {
  const sha = createHash("sha1").update(lua).digest("hex");
  return {
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith("NOSCRIPT"))) throw error;
        return redis.eval(lua, keys.length, ...keys, ...args);
      }
    },
  };
}
