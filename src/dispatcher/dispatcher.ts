// The webhook dispatcher (CONTRACT §7): fans committed outbox events out to subscriptions, then
// claims due deliveries with leases and sends them. Several instances may run against one database:
// SKIP LOCKED splits the work, and a lease keeps a delivery with one sender until it expires, which
// is also how a crashed instance's deliveries are taken over. LISTEN/NOTIFY wakes it within
// milliseconds of a commit; polling is the fallback.
import { randomUUID } from "node:crypto";
import os from "node:os";
import { Agent } from "undici";
import type { BackgroundWorker } from "../app.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { listen, type Listening } from "../db/listen.ts";
import { DELIVERIES_CHANNEL } from "../events/delivery-wakeup.ts";
import { EVENTS_CHANNEL } from "../events/outbox.ts";
import type { Event, Webhook, WebhookDelivery } from "../generated/prisma/client.ts";
import { newId } from "../ids.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import type { EventEnvelope } from "../events/catalog.ts";
import { fanOutEvents } from "./fan-out.ts";
import { decideOutcome, nextAttemptDelay, type DeliveryOutcome } from "./retry-policy.ts";
import { AttemptAbandoned, sendAttempt, type SentAttempt } from "./send-attempt.ts";
import { buildDeliveryRequest } from "./signing.ts";
import { checkWebhookUrl, createGuardedLookup, type ResolveAll } from "./ssrf-guard.ts";

export const DISPATCHER_NAME = "webhook-dispatcher";
const FAN_OUT_BATCH = 100;
/** Attempts one instance runs at once for the same subscription. */
const PER_WEBHOOK_IN_FLIGHT = 4;
/**
 * The lease starts at claim, before the claimed rows are loaded, a pool connection is found and the
 * request is sent, and it must still hold when the outcome is recorded, or the attempt is dropped and
 * the delivery sent again by whoever takes it over. Twice the timeout plus a margin covers those waits
 * under load; a crashed instance's deliveries are only that much later taken over.
 */
const leaseFor = (timeoutMs: number) => timeoutMs * 2 + 5000;
/** How long stop() lets in-flight attempts finish before abandoning them. */
const STOP_GRACE_MS = 2000;

type ClaimedDelivery = WebhookDelivery & { webhook: Webhook; event: Event };

export interface DispatcherOptions {
  db: Database;
  config: Pick<
    Config,
    | "WEBHOOK_ALLOW_PRIVATE_TARGETS"
    | "WEBHOOK_TIMEOUT_MS"
    | "WEBHOOK_RETRY_INITIAL_MS"
    | "WEBHOOK_RETRY_MAX_DELAY_MS"
    | "WEBHOOK_RETRY_WINDOW_MS"
  >;
  log: Logger;
  metrics: Pick<Metrics, "webhookDeliveries" | "webhookAttemptDuration">;
  /** Lease owner name; unique per instance by default. */
  instanceId?: string;
  pollIntervalMs?: number;
  /** Attempts in flight at once. */
  concurrency?: number;
  /**
   * Test seams. Production trusts Node's default CAs, which include NODE_EXTRA_CA_CERTS (undici's
   * TLS connector leaves `ca` unset unless given here), and resolves names with dns.lookup.
   */
  tls?: { ca?: string | Buffer };
  /** Called once per event, after the transaction that fanned it out (the Redis event feed). */
  publishEvents?: (events: EventEnvelope[]) => Promise<void>;
  resolveAll?: ResolveAll;
  random?: () => number;
}

export interface WebhookDispatcher extends BackgroundWorker {
  /** One pass (fan out, claim what is due, attempt it) that resolves when those attempts are recorded. */
  runOnce(): Promise<{ fannedOut: number; attempted: number }>;
}

export function createDispatcher(options: DispatcherOptions): WebhookDispatcher {
  const { db, config, log, metrics } = options;
  const owner = options.instanceId ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const leaseMs = leaseFor(config.WEBHOOK_TIMEOUT_MS);
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const concurrency = options.concurrency ?? 16;
  const allowPrivateTargets = config.WEBHOOK_ALLOW_PRIVATE_TARGETS;
  const agent = new Agent({
    connect: { lookup: createGuardedLookup({ allowPrivateTargets, resolveAll: options.resolveAll }), ...options.tls },
  });
  const shutdown = new AbortController();
  const inFlight = new Set<Promise<void>>();

  let running = false;
  let stopping: Promise<void> | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let dueTimer: NodeJS.Timeout | undefined;
  let listening: Listening | undefined;
  let ticking: Promise<void> | undefined;
  let again = false;

  async function claim(limit: number): Promise<ClaimedDelivery[]> {
    // At most PER_WEBHOOK_IN_FLIGHT attempts per subscription here, counting those already running:
    // one blackholed endpoint with a deep backlog must not hold every slot for a whole timeout.
    // Window functions cannot sit beside FOR UPDATE, so candidates are ranked first, then locked.
    const claimed = await db.prisma.$queryRaw<{ id: string }[]>`
      WITH busy AS (
        SELECT webhook_id, count(*) AS n FROM webhook_deliveries
         WHERE lease_owner = ${owner} AND lease_expires_at >= now()
         GROUP BY webhook_id
      ),
      candidates AS (
        SELECT id FROM (
          SELECT d.id, d.next_attempt_at,
                 row_number() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.id) + coalesce(b.n, 0) AS nth
            FROM webhook_deliveries d LEFT JOIN busy b ON b.webhook_id = d.webhook_id
           WHERE d.status = 'pending' AND d.next_attempt_at <= now()
             AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now())
        ) ranked
         WHERE nth <= ${PER_WEBHOOK_IN_FLIGHT}
         ORDER BY next_attempt_at, id
         LIMIT ${limit}
      ),
      due AS (
        SELECT id FROM webhook_deliveries
         WHERE id IN (SELECT id FROM candidates)
           AND status = 'pending' AND next_attempt_at <= now()
           AND (lease_expires_at IS NULL OR lease_expires_at < now())
         ORDER BY next_attempt_at, id
           FOR UPDATE SKIP LOCKED
      )
      UPDATE webhook_deliveries d
         SET lease_owner = ${owner}, lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'
        FROM due
       WHERE d.id = due.id
      RETURNING d.id`;
    if (claimed.length === 0) return [];
    return db.prisma.webhookDelivery.findMany({
      where: { id: { in: claimed.map((c) => c.id) } },
      include: { webhook: true, event: true },
    });
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const { webhook, event } = delivery;
    if (webhook.status === "disabled") {
      const { count } = await db.prisma.webhookDelivery.updateMany({
        where: { id: delivery.id, leaseOwner: owner, status: "pending" },
        data: { status: "cancelled", nextAttemptAt: null, leaseOwner: null, leaseExpiresAt: null, updatedAt: new Date() },
      });
      if (count > 0) metrics.webhookDeliveries.inc({ outcome: "cancelled" });
      return;
    }

    const attemptedAt = new Date();
    // IP literals never reach the guarded lookup, so the URL itself is checked on every attempt.
    const refusal = checkWebhookUrl(webhook.url, { allowPrivateTargets });
    const result: SentAttempt = refusal
      ? { error: "forbidden_target", durationMs: 0, detail: refusal }
      : await sendAttempt({
          url: webhook.url,
          delivery: buildDeliveryRequest({
            secret: webhook.secret,
            deliveryId: delivery.id,
            eventId: event.id,
            eventType: event.type,
            timestamp: event.occurredAt.toISOString(),
            data: event.data as object,
            attemptedAt,
          }),
          dispatcher: agent,
          timeoutMs: config.WEBHOOK_TIMEOUT_MS,
          shutdown: shutdown.signal,
        });
    metrics.webhookAttemptDuration.observe(result.durationMs / 1000);

    const firstAttemptAt = delivery.firstAttemptAt ?? attemptedAt;
    const outcome = decideOutcome({
      ...result,
      firstAttemptAt,
      now: new Date(),
      windowMs: config.WEBHOOK_RETRY_WINDOW_MS,
      nextDelayMs: nextAttemptDelay({
        attempt: delivery.attemptCount + 1,
        initialMs: config.WEBHOOK_RETRY_INITIAL_MS,
        maxDelayMs: config.WEBHOOK_RETRY_MAX_DELAY_MS,
        random: options.random,
      }),
    });
    if (await record(delivery, { attemptedAt, firstAttemptAt, result, outcome })) metrics.webhookDeliveries.inc({ outcome: outcome.kind });
  }

  /**
   * The attempt and the delivery's new state in one transaction, with the subscription's health.
   * False when only the attempt was logged: the lease was lost or the delivery cancelled meanwhile.
   */
  async function record(
    delivery: ClaimedDelivery,
    { attemptedAt, firstAttemptAt, result, outcome }: { attemptedAt: Date; firstAttemptAt: Date; result: SentAttempt; outcome: DeliveryOutcome },
  ): Promise<boolean> {
    const nextAttemptAt = outcome.kind === "retry" ? outcome.nextAttemptAt : null;
    const now = new Date();
    return db.prisma.$transaction(async (tx) => {
      await tx.deliveryAttempt.create({
        data: {
          id: newId(),
          deliveryId: delivery.id,
          attemptedAt,
          statusCode: result.statusCode ?? null,
          durationMs: result.durationMs,
          error: result.error ? `${result.error}: ${result.detail}` : null,
          nextAttemptAt,
        },
      });
      // Still ours and still pending: a subscription disabled meanwhile has cancelled it for good.
      const { count } = await tx.webhookDelivery.updateMany({
        where: { id: delivery.id, leaseOwner: owner, status: "pending" },
        data: {
          status: outcome.kind === "retry" ? "pending" : outcome.kind,
          attemptCount: { increment: 1 },
          firstAttemptAt,
          nextAttemptAt,
          leaseOwner: null,
          leaseExpiresAt: null,
          updatedAt: now,
        },
      });
      // Lease lost (this attempt outlived it) or cancelled: the attempt stays in the log, nothing else changes.
      if (count === 0) return false;
      if (outcome.kind === "failed") {
        await tx.webhook.updateMany({ where: { id: delivery.webhookId, status: "active" }, data: { status: "error", updatedAt: now } });
      } else if (outcome.kind === "delivered") {
        await tx.webhook.updateMany({ where: { id: delivery.webhookId, status: "error" }, data: { status: "active", updatedAt: now } });
      }
      return true;
    });
  }

  function track(work: Promise<void>): Promise<void> {
    const tracked: Promise<void> = work
      .catch((err: unknown) => {
        if (!(err instanceof AttemptAbandoned)) log.error({ err }, "webhook delivery attempt failed to run");
      })
      .finally(() => {
        inFlight.delete(tracked);
        wake(); // a slot is free
      });
    inFlight.add(tracked);
    return tracked;
  }

  async function pass(): Promise<{ fannedOut: number; started: Promise<void>[] }> {
    let fannedOut = 0;
    let batch: EventEnvelope[];
    do {
      batch = await fanOutEvents(db.prisma, FAN_OUT_BATCH);
      fannedOut += batch.length;
      // Live subscribers are best effort; webhooks are the reliable path, so a failure is only logged.
      if (batch.length && options.publishEvents) {
        await options.publishEvents(batch).catch((err: unknown) => log.error({ err }, "could not publish events to subscribers"));
      }
    } while (batch.length === FAN_OUT_BATCH);
    const free = concurrency - inFlight.size;
    const claimed = free > 0 ? await claim(free) : [];
    return { fannedOut, started: claimed.map((d) => track(attempt(d))) };
  }

  /**
   * Wakes again when the earliest scheduled retry is due, if that comes before the next poll. Only
   * future ones count: what is already due is in flight here or leased elsewhere (the poll catches
   * expired leases), and when every slot is busy a finishing attempt wakes the loop anyway.
   */
  async function scheduleNextDue(): Promise<void> {
    if (inFlight.size >= concurrency) return;
    const [row] = await db.prisma.$queryRaw<{ due: Date | null }[]>`
      SELECT min(next_attempt_at) AS due FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > now()`;
    const wait = row?.due ? row.due.getTime() - Date.now() : Infinity;
    clearTimeout(dueTimer);
    if (running && wait < pollIntervalMs) dueTimer = setTimeout(wake, Math.max(0, wait) + 5);
  }

  function wake(): void {
    if (!running) return;
    if (ticking) {
      again = true;
      return;
    }
    ticking = (async () => {
      do {
        again = false;
        try {
          await pass();
          await scheduleNextDue();
        } catch (err) {
          log.error({ err }, "webhook dispatcher pass failed");
        }
      } while (again && running);
      ticking = undefined;
    })();
  }

  async function releaseLeases(): Promise<void> {
    await db.prisma.$executeRaw`
      UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = ${owner}`;
  }

  return {
    name: DISPATCHER_NAME,

    start() {
      if (running || stopping) return;
      running = true;
      pollTimer = setInterval(wake, pollIntervalMs);
      listening = listen(db.pool, [EVENTS_CHANNEL, DELIVERIES_CHANNEL], wake, {
        log,
        onListening: wake, // whatever was committed before LISTEN took effect
      });
      wake();
    },

    async runOnce() {
      const { fannedOut, started } = await pass();
      await Promise.all(started);
      return { fannedOut, attempted: started.length };
    },

    stop() {
      stopping ??= (async () => {
        running = false;
        clearInterval(pollTimer);
        clearTimeout(dueTimer);
        await listening?.close();
        listening = undefined;
        await ticking;
        let graceTimer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, STOP_GRACE_MS)));
        await Promise.race([Promise.all(inFlight), grace]);
        clearTimeout(graceTimer);
        shutdown.abort();
        await Promise.all(inFlight);
        await releaseLeases().catch((err: unknown) => log.warn({ err }, "could not release webhook delivery leases"));
        await agent.destroy();
      })();
      return stopping;
    },
  };
}
