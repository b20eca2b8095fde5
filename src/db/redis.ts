import { Redis } from "ioredis";
import type { Logger } from "../log.ts";

const FIRST_CONNECT_WAIT_MS = 2000;

/**
 * The shared Redis client (REDIS_URL): rate-limit counters and the live event feed's publisher.
 * Start-up waits briefly for the first connection, so an instance serves with the shared budget
 * from its first request; if Redis is away, users of the client fall back until ioredis reconnects.
 */
export async function connectRedis(url: string, log: Logger): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on("error", (err) => log.warn({ err: { message: err.message } }, "redis connection error"));
  let timer: NodeJS.Timeout | undefined;
  const connected = await Promise.race([
    new Promise<boolean>((resolve) => redis.once("ready", () => resolve(true))),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), FIRST_CONNECT_WAIT_MS))),
  ]);
  clearTimeout(timer);
  if (!connected) log.warn("redis not reachable yet; counting rate limits per instance until it is");
  return redis;
}
