// One LISTEN connection for all of an instance's listeners (the dispatcher, the scan runner, the
// live feed, the agents' long polls): behind a pooler each LISTEN is a direct connection, so one an
// instance rather than four. The connection listens on every listener's channels; a listener that
// brings a channel it lacks has it opened again with them all, and then every listener catches up
// (its onListening), as after a reconnection, for whatever was notified in between. A listener
// that joins while the connection is away is told so at once (its `ready` rejects), as it would be
// by a connection of its own.
import type pg from "pg";
import { listen, type Listening, type ListenOptions, type SharedListener } from "./listen.ts";

interface Member {
  channels: readonly string[];
  onNotification: (msg: pg.Notification) => void;
  onListening?: () => void;
}

export function sharedListener(source: pg.Pool | string, options: Omit<ListenOptions, "onListening">): SharedListener {
  const members = new Set<Member>();
  let current: Connection | undefined;

  interface Connection {
    channels: ReadonlySet<string>;
    listening: Listening;
    /** Listening now, or the last error since it was (before its first attempt settles: neither). */
    state: { up: true } | { up: false; err?: unknown };
  }

  /** The connection listening on every member's channels, opened again when one is missing. */
  function connection(): Connection {
    const channels = new Set([...members].flatMap((m) => m.channels));
    if (current && [...channels].every((c) => current!.channels.has(c))) return current;
    const previous = current?.listening;
    const opened: Connection = {
      channels,
      state: { up: false },
      listening: listen(
        source,
        [...channels],
        (msg) => {
          for (const m of members) if (m.channels.includes(msg.channel)) m.onNotification(msg);
        },
        {
          ...options,
          onListening: () => {
            opened.state = { up: true };
            for (const m of [...members]) m.onListening?.();
          },
          onLost: (err) => (opened.state = { up: false, err }),
        },
      ),
    };
    current = opened;
    void previous?.close();
    return opened;
  }

  /** What a joining member's `ready` is: the first attempt's outcome, or what the connection is now. */
  function readiness(joined: Connection): Promise<void> {
    if (joined.state.up) return Promise.resolve();
    if ("err" in joined.state) return Promise.reject(joined.state.err);
    return joined.listening.ready;
  }

  async function closeConnection(): Promise<void> {
    const open = current;
    current = undefined;
    await open?.listening.close();
  }

  return {
    shared: true,
    listen(channels, onNotification, onListening) {
      const member: Member = { channels, onNotification, onListening };
      members.add(member);
      const ready = readiness(connection());
      ready.catch(() => {}); // reported through the log; callers that care await it
      return {
        ready,
        async close() {
          members.delete(member);
          if (members.size === 0) await closeConnection();
        },
      };
    },
    async close() {
      members.clear();
      await closeConnection();
    },
  };
}
