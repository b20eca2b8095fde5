// One LISTEN connection that comes back by itself: the dispatcher, the scan runner and the
// Postgres event source all wake on NOTIFY and would otherwise each reimplement the reconnect.
// The service's own share one (shared-listener.ts); `source` may be that, a URL or a pool.
import pg from "pg";
import type { Logger } from "../log.ts";
import type { DatabaseHealth } from "./database-health.ts";

export interface Listening {
  /** Settles with the first attempt: resolves once LISTEN is active, rejects if it failed (retries go on). */
  ready: Promise<void>;
  /** Ends the connection and any pending reconnect; a connection still being opened is closed as it opens. */
  close(): Promise<void>;
}

export interface ListenOptions {
  log: Pick<Logger, "warn">;
  /**
   * With it, a connection lost because the database is away is reported there (which logs the
   * outage once) instead of here, and reconnecting waits until the database is back.
   */
  health?: Pick<DatabaseHealth, "failed" | "whenAvailable">;
  /** Wait before reconnecting after a lost or failed connection. */
  retryMs?: number;
  /** Called each time LISTEN takes effect (first time and after every reconnection): notifications sent while not listening are lost, so callers catch up here. */
  onListening?: () => void;
  /** Called when the connection is lost or an attempt fails (a retry is then scheduled). */
  onLost?: (err: unknown) => void;
}

/** Listeners sharing one connection (shared-listener.ts). */
export interface SharedListener {
  readonly shared: true;
  listen(
    channels: readonly string[],
    onNotification: (msg: pg.Notification) => void,
    onListening?: () => void,
  ): Listening;
  close(): Promise<void>;
}

/** Where a LISTEN goes: a connection of its own to a URL or from a pool, or a shared one. */
export type ListenSource = pg.Pool | string | SharedListener;

const isShared = (source: ListenSource): source is SharedListener => typeof source === "object" && "shared" in source;

interface Connection {
  client: pg.Client | pg.PoolClient;
  end(): Promise<void>;
}

async function connect(source: pg.Pool | string): Promise<Connection> {
  if (typeof source === "string") {
    const client = new pg.Client({ connectionString: source });
    // Errors before connect() settles reject it; this keeps them from being unhandled meanwhile.
    client.on("error", () => {});
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    return { client, end: () => client.end().catch(() => {}) };
  }
  const client = await source.connect();
  client.on("error", () => {});
  return {
    client,
    end: async () => client.release(true),
  };
}

export function listen(
  source: ListenSource,
  channels: readonly string[],
  onNotification: (msg: pg.Notification) => void,
  options: ListenOptions,
): Listening {
  if (isShared(source)) return source.listen(channels, onNotification, options.onListening);
  const own: pg.Pool | string = source;
  const retryMs = options.retryMs ?? 1000;
  let closed = false;
  let current: Connection | undefined;
  let attempt: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;

  function lost(connection: Connection | undefined, err: unknown): void {
    if (connection) {
      if (current !== connection) return; // already handled (error and end both fire)
      current = undefined;
      void connection.end();
    }
    if (closed) return;
    options.onLost?.(err);
    const databaseAway = options.health?.failed(err) ?? false;
    if (!databaseAway) options.log.warn({ err, channels }, "no LISTEN connection; retrying");
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      // While the database is down, the next attempt waits for it to be back rather than retrying blind.
      const ready = databaseAway ? options.health!.whenAvailable() : Promise.resolve();
      attempt = ready.then(() => (closed ? undefined : open())).catch(() => {}); // a failure has scheduled the next attempt
    }, retryMs);
  }

  async function open(): Promise<void> {
    let connection: Connection | undefined;
    try {
      connection = await connect(own);
      if (closed) return void (await connection.end());
      const opened = connection;
      opened.client.on("notification", (msg) => {
        if (current === opened) onNotification(msg);
      });
      opened.client.on("error", (err) => lost(opened, err));
      opened.client.on("end", () => lost(opened, new Error("LISTEN connection ended")));
      await opened.client.query(channels.map((c) => `LISTEN ${c}`).join("; "));
      if (closed) return void (await opened.end());
      current = opened;
    } catch (err) {
      if (connection && current !== connection) void connection.end();
      lost(undefined, err);
      throw err;
    }
    options.onListening?.();
  }

  attempt = open();
  const ready = attempt;
  ready.catch(() => {}); // reported through the log; callers that care await it

  return {
    ready,
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      retryTimer = undefined;
      await attempt?.catch(() => {});
      const connection = current;
      current = undefined;
      await connection?.end();
    },
  };
}
