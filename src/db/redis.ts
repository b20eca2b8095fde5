import { Redis } from "ioredis";
import type { Logger } from "../log.ts";

const FIRST_CONNECT_WAIT_MS = 2000;

/**
 * The shared Redis client (REDIS_URL): rate-limit counters and the live event feed's publisher.
 * Start-up waits briefly for the first connection, so an instance serves with the shared budget
 * from its first request; if Redis is away, users of the client fall back until ioredis reconnects
 * (every 2 s at most). Redis going away and coming back is logged once each, not per retry.
 */
export async function connectRedis(url: string, log: Logger): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  let reachable: boolean | undefined;
  const lost = (err?: Error) => {
    if (reachable === false) return;
    reachable = false;
    log.warn(
      { err: err && { message: err.message } },
      "redis unreachable; counting rate limits per instance and serving live events from this instance until it is back",
    );
  };
  redis.on("error", lost);
  redis.on("ready", () => {
    if (reachable === false) log.info("redis reachable again");
    reachable = true;
  });
  let timer: NodeJS.Timeout | undefined;
  const connected = await Promise.race([
    new Promise<boolean>((resolve) => redis.once("ready", () => resolve(true))),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), FIRST_CONNECT_WAIT_MS))),
  ]);
  clearTimeout(timer);
  if (!connected) lost();
  return redis;
}
