// Whether the database can be reached, known in one place (docs/spec/CONTRACT.md §15). An error that says the
// connection failed (refused, reset, timed out, the server shutting down) is checked at once with a
// probe on a connection of its own; if the probe fails too, the database is down: that is logged once,
// requests that need it are answered 503 at once, background work waits, and a probe runs every
// second until one succeeds, which is logged once too and wakes whoever waits. Errors of a query
// itself (a constraint, a syntax error) say nothing about reachability and are not this module's.
import pg from "pg";
import { Prisma } from "../generated/prisma/client.ts";
import type { Logger } from "../log.ts";

/** Thrown by what needs the database while it is down; answered 503 (REST) or UNAVAILABLE (GraphQL). */
export class DatabaseUnavailable extends Error {
  constructor() {
    super("The database cannot be reached; try again shortly");
    this.name = "DatabaseUnavailable";
  }
}

/** Seconds a client should wait before trying again (Retry-After). */
export const RETRY_AFTER_SECONDS = 2;

// Node's socket errors, and what pg and pg-pool say when a connection fails, ends or times out.
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ECONNABORTED",
]);
const DRIVER_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;
// SQLSTATE class 08 (connection exception), 57P01–57P03 (admin or crash shutdown, cannot connect now).
const SQLSTATE = /^(08|57P0[123])/;
// Prisma: can't reach the server, timed out, server closed the connection; its adapter's kinds.
const PRISMA_CODES = new Set(["P1001", "P1002", "P1017"]);
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout"]);

/** True when `err` (or what it wraps) says the database could not be reached, as opposed to a query failing. */
export function isConnectionError(err: unknown): boolean {
  for (let current = err, depth = 0; current && typeof current === "object" && depth < 8; depth++) {
    if (current instanceof DatabaseUnavailable) return true;
    const e = current as {
      code?: unknown;
      message?: unknown;
      meta?: { driverAdapterError?: { cause?: { kind?: string; code?: string } } };
      cause?: unknown;
    };
    if (typeof e.code === "string" && (SOCKET_CODES.has(e.code) || SQLSTATE.test(e.code) || PRISMA_CODES.has(e.code)))
      return true;
    if (typeof e.message === "string" && DRIVER_MESSAGES.test(e.message)) return true;
    const adapter = e.meta?.driverAdapterError?.cause;
    if (adapter && (ADAPTER_KINDS.has(adapter.kind ?? "") || SQLSTATE.test(adapter.code ?? ""))) return true;
    if (
      current instanceof Prisma.PrismaClientUnknownRequestError &&
      DRIVER_MESSAGES.test(current.message.split("\n").at(-1) ?? "")
    )
      return true;
    current = e.cause;
  }
  return false;
}

export interface DatabaseHealth {
  /** False while the database is known to be down. */
  available(): boolean;
  /**
   * Reports an error from the database. True when it is a connection error (the caller answers as
   * unavailable and logs nothing: this module logs the outage once).
   */
  failed(err: unknown): boolean;
  /** Resolves when the database is available (at once when it is). */
  whenAvailable(): Promise<void>;
  /** Throws DatabaseUnavailable while the database is down. */
  require(): void;
  close(): void;
}

export function createDatabaseHealth(deps: {
  databaseUrl: string;
  log: Logger;
  probeIntervalMs?: number;
  probeTimeoutMs?: number;
}): DatabaseHealth {
  const probeIntervalMs = deps.probeIntervalMs ?? 1000;
  const probeTimeoutMs = deps.probeTimeoutMs ?? 2000;
  let state: "up" | "checking" | "down" = "up";
  let downSince = 0;
  let probeTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let recovered: { promise: Promise<void>; resolve: () => void } | undefined;

  /** One round trip on a connection of its own: the pools may be busy or hold dead connections. */
  async function probe(): Promise<boolean> {
    const client = new pg.Client({
      connectionString: deps.databaseUrl,
      connectionTimeoutMillis: probeTimeoutMs,
      query_timeout: probeTimeoutMs,
    });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.query("SELECT 1");
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }

  async function check(): Promise<void> {
    const reachable = await probe();
    if (closed) return;
    if (reachable) {
      if (state === "down") deps.log.info({ downForMs: Date.now() - downSince }, "database reachable again");
      state = "up";
      recovered?.resolve();
      recovered = undefined;
      return;
    }
    if (state !== "down") {
      state = "down";
      downSince = Date.now();
      deps.log.warn("database unreachable; answering 503 and pausing background work until it is back");
    }
    probeTimer = setTimeout(() => void check(), probeIntervalMs);
    probeTimer.unref();
  }

  return {
    available: () => state !== "down",
    failed(err) {
      if (!isConnectionError(err)) return false;
      if (state === "up" && !closed) {
        state = "checking";
        void check();
      }
      return true;
    },
    whenAvailable() {
      if (state !== "down") return Promise.resolve();
      if (!recovered) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        recovered = { promise, resolve };
      }
      return recovered.promise;
    },
    require() {
      if (state === "down") throw new DatabaseUnavailable();
    },
    close() {
      closed = true;
      clearTimeout(probeTimer);
      recovered?.resolve();
    },
  };
}
