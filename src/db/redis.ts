import { Redis } from "ioredis";
import type { Logger } from "../log.ts";

/** The shared Redis client (REDIS_URL): rate-limit counters and the live event feed's publisher. */
export function connectRedis(url: string, log: Logger): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  // ioredis keeps reconnecting; users of the client fall back while it is away.
  redis.on("error", (err) => log.warn({ err: { message: err.message } }, "redis connection error"));
  return redis;
}
