// The two processes the delivery benchmark talks to besides the service: the HTTPS receiver
// (receiver.ts, forked with an IPC channel) and the bare signed sender (bare-sender.ts).
import { fork, spawn } from "node:child_process";
import type { SelfSignedCert } from "../test/helpers/self-signed-cert.ts";

export interface Arrival {
  deliveryId: string;
  eventId: string;
  path: string;
  at: number;
}

export interface Receiver {
  pid: number;
  port: number;
  /** Hands over the arrivals noted since the last call. */
  take(): Promise<Arrival[]>;
  close(): void;
}

/** `slowMs`: how long it waits before answering under /slow/. */
export async function startReceiver(cert: SelfSignedCert, slowMs: number): Promise<Receiver> {
  const child = fork(new URL("./receiver.ts", import.meta.url).pathname, [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, RECEIVER_KEY: cert.key, RECEIVER_CERT: cert.cert, RECEIVER_SLOW_MS: String(slowMs) },
  });
  const answer = <T>(type: string) =>
    new Promise<T>((resolve) => {
      const onMessage = (msg: { type: string } & T) => {
        if (msg.type !== type) return;
        child.off("message", onMessage);
        resolve(msg);
      };
      child.on("message", onMessage);
    });
  const { port } = await answer<{ port: number }>("listening");
  return {
    pid: child.pid!,
    port,
    async take() {
      const reply = answer<{ arrivals: Arrival[] }>("arrivals");
      child.send({ type: "take" });
      return (await reply).arrivals;
    },
    close: () => child.kill(),
  };
}

/** Runs the bare sender to completion: `count` signed POSTs to `url`, `inFlight` at a time. */
export function runBareSender(options: {
  url: string;
  count: number;
  inFlight: number;
  ca: string;
}): Promise<{ perSecond: number; failed: number }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", new URL("./bare-sender.ts", import.meta.url).pathname, JSON.stringify(options)],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  child.stdout.on("data", (chunk) => (out += String(chunk)));
  return new Promise((resolve, reject) =>
    child.once("exit", (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bare sender exited with ${code}`)),
    ),
  );
}
