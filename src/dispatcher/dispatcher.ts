// The webhook dispatcher (docs/spec/CONTRACT.md §7): fans committed outbox events out to subscriptions (which is
// also when they take their place in the event log, fan-out.ts), then claims due deliveries with
// leases and sends them. Everything that touches the database works in
// batches, one statement each: fan-out of many events, a claim of many deliveries joined with their
// event and subscription, and the outcomes of many attempts (outcome-recorder.ts), so a delivery
// costs little more than its HTTP request. Fan-out and sending are two loops: deliveries go out as
// soon as the first batch of a large transaction's events is fanned out, not after all of them.
// Several instances may run against one database: SKIP LOCKED splits the work, and a lease keeps a
// delivery with one sender until it expires, which is also how a crashed instance's deliveries are
// taken over. LISTEN/NOTIFY wakes it within milliseconds of a commit; polling is the fallback. How
// many attempts go to one subscription's endpoint at once adapts to how it answers
// (endpoint-limiter.ts). While the database is down both loops wait for it instead of failing every
// second (its health logs the outage once).
import { randomUUID } from "node:crypto";
import os from "node:os";
import { Agent } from "undici";
import type { BackgroundWorker } from "../background-worker.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import type { DatabaseHealth } from "../db/database-health.ts";
import { listen, type Listening, type ListenSource } from "../db/listen.ts";
import { SecretKeyUnavailable, type SecretBox } from "../domain/webhooks/secret-box.ts";
import { DELIVERIES_CHANNEL } from "../events/delivery-wakeup.ts";
import type { LoggedEvent } from "../events/event-log.ts";
import { EVENTS_CHANNEL } from "../events/outbox.ts";
import { newId } from "../ids.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { claimDeliveries, type ClaimedDelivery } from "./claim.ts";
import { createCoalescingLoop } from "./coalescing-loop.ts";
import { createEndpointLimiter, endpointSignal, type EndpointLimits, type EndpointSignal } from "./endpoint-limiter.ts";
import { fanOutPending } from "./fan-out.ts";
import { createOutcomeRecorder } from "./outcome-recorder.ts";
import type { Outcome } from "./record-outcomes.ts";
import { decideOutcome, nextAttemptDelay } from "./retry-policy.ts";
import { AttemptAbandoned, sendAttempt, type SentAttempt } from "./send-attempt.ts";
import { buildDeliveryRequest } from "./signing.ts";
import { checkWebhookUrl, createGuardedLookup, type ResolveAll } from "../net/ssrf-guard.ts";

export const DISPATCHER_NAME = "webhook-dispatcher";
/**
 * The lease starts at claim and must still hold when the outcome is recorded, or the attempt is
 * dropped and the delivery sent again by whoever takes it over. Twice the timeout plus a margin
 * covers the waits around the request under load; a crashed instance's deliveries are only that
 * much later taken over.
 */
const leaseFor = (timeoutMs: number) => timeoutMs * 2 + 5000;
/** How long stop() lets in-flight attempts finish before abandoning them. */
const STOP_GRACE_MS = 2000;

export interface DispatcherOptions {
  db: Pick<Database, "queuePool" | "listenOn">;
  /** Where its LISTEN goes (the instance's shared listener); a connection of its own to `db.listenOn` when absent. */
  listenOn?: ListenSource;
  /** With it, the loops pause while the database is down and resume when it is back. */
  health?: DatabaseHealth;
  config: Pick<
    Config,
    | "WEBHOOK_ALLOW_PRIVATE_TARGETS"
    | "WEBHOOK_TIMEOUT_MS"
    | "WEBHOOK_RETRY_INITIAL_MS"
    | "WEBHOOK_RETRY_MAX_DELAY_MS"
    | "WEBHOOK_RETRY_WINDOW_MS"
    | "WEBHOOK_CONCURRENCY"
    | "WEBHOOK_ENDPOINT_CONCURRENCY"
    | "WEBHOOK_ENDPOINT_MIN_CONCURRENCY"
  >;
  log: Logger;
  metrics: Pick<Metrics, "webhookDeliveries" | "webhookAttemptDuration">;
  /** Opens each subscription's secret to sign its attempt. */
  webhookSecrets: SecretBox;
  /** Lease owner name; unique per instance by default. */
  instanceId?: string;
  pollIntervalMs?: number;
  /** Requests under way at once, and outcomes waiting to be written at most; WEBHOOK_CONCURRENCY by default. */
  concurrency?: number;
  /** Per-endpoint limits; from WEBHOOK_ENDPOINT_* by default. */
  endpointLimits?: Partial<EndpointLimits>;
  /**
   * Test seams. Production trusts Node's default CAs, which include NODE_EXTRA_CA_CERTS (undici's
   * TLS connector leaves `ca` unset unless given here), and resolves names with dns.lookup.
   */
  tls?: { ca?: string | Buffer };
  /** Called with each batch of events fanned out, in log order (the live event feed). */
  onFannedOut?: (events: LoggedEvent[]) => void;
  /** Whether onFannedOut wants the events now; when it does not, the fan-out does not read them back. */
  wantsFannedOut?: () => boolean;
  resolveAll?: ResolveAll;
  random?: () => number;
}

export interface WebhookDispatcher extends BackgroundWorker {
  /** One pass (fan out, claim what is due, attempt it) that resolves when those attempts are recorded. */
  runOnce(): Promise<{ fannedOut: number; attempted: number }>;
}

export function createDispatcher(options: DispatcherOptions): WebhookDispatcher {
  const { config, log, metrics, webhookSecrets } = options;
  const pool = options.db.queuePool;
  const owner = options.instanceId ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const leaseMs = leaseFor(config.WEBHOOK_TIMEOUT_MS);
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const concurrency = options.concurrency ?? config.WEBHOOK_CONCURRENCY;
  const limiter = createEndpointLimiter({
    max: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    min: config.WEBHOOK_ENDPOINT_MIN_CONCURRENCY,
    ...options.endpointLimits,
  });
  const allowPrivateTargets = config.WEBHOOK_ALLOW_PRIVATE_TARGETS;
  // One keep-alive connection pool per origin, as many connections as attempts in flight to it.
  const agent = new Agent({
    connect: { lookup: createGuardedLookup({ allowPrivateTargets, resolveAll: options.resolveAll }), ...options.tls },
  });
  const recorder = createOutcomeRecorder({ pool, owner, log, health: options.health });
  const shutdown = new AbortController();
  /** Attempts whose request is under way: each holds a slot. */
  const sending = new Set<Promise<unknown>>();
  /** Outcomes handed to the recorder and not yet written (their deliveries are still leased). */
  let unrecorded = 0;

  let running = false;
  let stopping: Promise<void> | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let dueTimer: NodeJS.Timeout | undefined;
  let dueAt = Infinity;
  let lookForNextDue = false;
  let listening: Listening | undefined;
  let waitingForDatabase = false;

  /** False while the database is down; the loops are then woken once it is back. */
  function databaseReady(): boolean {
    const health = options.health;
    if (!health || health.available()) return true;
    if (!waitingForDatabase) {
      waitingForDatabase = true;
      void health.whenAvailable().then(() => {
        waitingForDatabase = false;
        wakeBoth();
      });
    }
    return false;
  }

  /** Logs a loop's failure, unless it is the database being away (its health logs that, once). */
  const loopFailed = (what: string) => (err: unknown) => {
    if (!options.health?.failed(err)) log.error({ err }, what);
  };

  /** Sends a delivery (unless its subscription is disabled) and decides what becomes of it. */
  async function attempt(delivery: ClaimedDelivery): Promise<{ outcome: Outcome; signal: EndpointSignal }> {
    if (delivery.webhookStatus === "disabled") {
      // Queued before the subscription was disabled, by a fan-out that raced the change.
      const outcome: Outcome = {
        deliveryId: delivery.id,
        webhookId: delivery.webhookId,
        status: "cancelled",
        nextAttemptAt: null,
      };
      return { outcome, signal: "healthy" };
    }
    const attemptedAt = new Date();
    // IP literals never reach the guarded lookup, so the URL itself is checked on every attempt.
    const refusal = checkWebhookUrl(delivery.url, { allowPrivateTargets });
    const result: SentAttempt = refusal
      ? { error: "forbidden_target", durationMs: 0, detail: refusal }
      : await send(delivery, attemptedAt).catch((err: unknown) => {
          if (!(err instanceof SecretKeyUnavailable)) throw err;
          return { error: "secret_unavailable", durationMs: 0, detail: err.message } as const;
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
    const nextAttemptAt = outcome.kind === "retry" ? outcome.nextAttemptAt : null;
    return {
      outcome: {
        deliveryId: delivery.id,
        webhookId: delivery.webhookId,
        status: outcome.kind === "retry" ? "pending" : outcome.kind,
        nextAttemptAt,
        attempt: {
          id: newId(),
          attemptedAt,
          firstAttemptAt,
          statusCode: result.statusCode ?? null,
          durationMs: result.durationMs,
          error: result.error ? `${result.error}: ${result.detail}` : null,
        },
      },
      signal: endpointSignal(result, config.WEBHOOK_TIMEOUT_MS),
    };
  }

  async function send(delivery: ClaimedDelivery, attemptedAt: Date): Promise<SentAttempt> {
    const request = buildDeliveryRequest({
      secret: webhookSecrets.open(delivery.sealedSecret, delivery.webhookId),
      deliveryId: delivery.id,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      timestamp: delivery.occurredAt,
      data: delivery.eventData,
      attemptedAt,
    });
    return sendAttempt({
      url: delivery.url,
      delivery: request,
      dispatcher: agent,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      shutdown: shutdown.signal,
    });
  }

  /**
   * Attempts a claimed delivery, then hands its outcome to the recorder. The slot is free as soon as
   * the request is over: the lease keeps the delivery this instance's until the outcome is written,
   * and claiming waits while `concurrency` outcomes are still unwritten. The endpoint limiter hears
   * of the answer at once and of the write when it is done (see its `available`).
   */
  function dispatch(delivery: ClaimedDelivery): Promise<void> {
    limiter.started(delivery.webhookId);
    const sent = attempt(delivery);
    const slot: Promise<unknown> = sent
      .catch(() => {})
      .finally(() => {
        sending.delete(slot);
        wake();
      });
    sending.add(slot);
    return sent.then(
      async ({ outcome, signal }) => {
        limiter.answered(delivery.webhookId, signal);
        unrecorded++;
        try {
          const recorded = await recorder.record(outcome);
          // Counted only when recorded: a lost lease or a cancellation meanwhile changed nothing.
          if (recorded) metrics.webhookDeliveries.inc({ outcome: recorded === "pending" ? "retry" : recorded });
          if (recorded === "pending" && outcome.nextAttemptAt) wakeAt(outcome.nextAttemptAt.getTime());
        } finally {
          unrecorded--;
          limiter.recorded(delivery.webhookId);
          wake();
        }
      },
      (err: unknown) => {
        // An attempt abandoned at shutdown says nothing of the endpoint, and nothing is written.
        limiter.answered(delivery.webhookId, "healthy");
        limiter.recorded(delivery.webhookId);
        if (!(err instanceof AttemptAbandoned)) log.error({ err }, "webhook delivery attempt failed to run");
      },
    );
  }

  /** Fans out every event committed so far, a batch at a time, calling `onBatch` after each one. */
  async function fanOut(onBatch: () => void): Promise<number> {
    return fanOutPending(pool, {
      wanted: () => options.onFannedOut !== undefined && (options.wantsFannedOut?.() ?? true),
      onBatch(fannedOut, events) {
        if (fannedOut) onBatch();
        if (events.length) options.onFannedOut?.(events);
      },
    });
  }

  /** Claims what is due and free slots allow, and starts sending it. */
  async function pass(): Promise<Promise<void>[]> {
    const free = Math.min(concurrency - sending.size, concurrency - unrecorded);
    if (free <= 0) return [];
    const { keys, available, backingOff, otherwise } = limiter.availability();
    const claimed = await claimDeliveries(pool, {
      owner,
      leaseMs,
      limit: free,
      allowance: { webhookIds: keys, available, backingOff },
      defaultAllowance: otherwise,
    });
    return claimed.map(dispatch);
  }

  /** Wakes at `time` unless an earlier wake-up is already set (or the next poll comes first). */
  function wakeAt(time: number): void {
    const wait = time - Date.now();
    if (!running || time >= dueAt || wait >= pollIntervalMs) return;
    clearTimeout(dueTimer);
    dueAt = time;
    dueTimer = setTimeout(
      () => {
        dueAt = Infinity;
        lookForNextDue = true; // later retries skipped by the `time >= dueAt` test above
        wake();
      },
      Math.max(0, wait) + 5,
    );
  }

  /**
   * Wakes again when the earliest scheduled retry is due, whoever scheduled it (this instance also
   * sets a wake-up for each retry it records). Only future ones count: what is already due is in
   * flight here or leased elsewhere (the poll catches expired leases). Only retries are scheduled
   * for later: a fresh delivery is due when it is queued.
   */
  async function scheduleNextDue(): Promise<void> {
    const { rows } = await pool.query<{ due: Date | null }>(
      "SELECT min(next_attempt_at) AS due FROM webhook_deliveries WHERE status = 'pending' AND attempt_count > 0 AND next_attempt_at > now()",
    );
    const due = rows[0]?.due;
    if (due) wakeAt(due.getTime());
  }

  /** Claims and sends while anything may be claimable: a freed slot, a fan-out, a due retry. */
  const claiming = createCoalescingLoop({
    running: () => running,
    step: async () => {
      if (!databaseReady()) return;
      const started = await pass();
      if (started.length === 0 || lookForNextDue) {
        lookForNextDue = false;
        await scheduleNextDue();
      }
    },
    onError: loopFailed("webhook dispatcher pass failed"),
  });
  const wake = claiming.wake;

  /** Fans out while events may be committed and not yet fanned out (NOTIFY, poll, start). */
  const fanningOut = createCoalescingLoop({
    running: () => running,
    step: async () => {
      if (databaseReady()) await fanOut(wake);
    },
    onError: loopFailed("webhook fan-out failed"),
  });
  const wakeToFanOut = fanningOut.wake;

  /** What the poll and start do: whatever was committed, due or released meanwhile. */
  function wakeBoth(): void {
    wakeToFanOut();
    wake();
  }

  async function releaseLeases(): Promise<void> {
    await pool.query(
      "UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = $1",
      [owner],
    );
  }

  return {
    name: DISPATCHER_NAME,

    start() {
      if (running || stopping) return;
      running = true;
      pollTimer = setInterval(wakeBoth, pollIntervalMs);
      listening = listen(
        options.listenOn ?? options.db.listenOn,
        [EVENTS_CHANNEL, DELIVERIES_CHANNEL],
        (msg) => (msg.channel === EVENTS_CHANNEL ? wakeToFanOut() : wake()),
        {
          log,
          health: options.health,
          onListening: wakeBoth, // whatever was committed before LISTEN took effect
        },
      );
      wakeBoth();
    },

    async runOnce() {
      const fannedOut = await fanOut(() => {});
      const started = await pass();
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
        await Promise.all([fanningOut.idle(), claiming.idle()]);
        let graceTimer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, STOP_GRACE_MS)));
        await Promise.race([Promise.all(sending), grace]);
        clearTimeout(graceTimer);
        shutdown.abort();
        await agent.destroy(); // ends the requests still under way
        await Promise.all(sending);
        await recorder.drain();
        await releaseLeases().catch((err: unknown) => log.warn({ err }, "could not release webhook delivery leases"));
      })();
      return stopping;
    },
  };
}
