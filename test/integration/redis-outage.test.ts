// Redis going away (REDIS_URL, docs/spec/CONTRACT.md §15), with a redis-server of this test's own on a free port:
// requests are still served, subscribers on the instance that fans events out still get them, an
// instance that heard of events only through Redis gets what it missed once Redis is back, each event
// once; and the outage is logged once each way.
import type { ChildProcess } from "node:child_process";
import pino from "pino";
import { DISPATCHER_NAME } from "../../src/dispatcher/dispatcher.ts";
import { recordEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";
import { spawnReaped } from "../helpers/process-reaper.ts";
import { requireTool } from "../helpers/required-tool.ts";
import { eventually } from "../helpers/scan-engines.ts";
import { freePort } from "../helpers/service-process.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

requireTool("redis-server");

let port: number;
let redis: ChildProcess | undefined;

async function startRedis(): Promise<void> {
  const child = spawnReaped(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => String(chunk).includes("Ready to accept connections") && resolve());
    child.once("exit", (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  redis = child;
}

async function stopRedis(): Promise<void> {
  const child = redis;
  redis = undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

describe("with Redis away", () => {
  let a: TestApp;
  let b: TestApp;
  const logLines: { level: number; msg: string }[] = [];
  beforeAll(async () => {
    port = await freePort();
    await startRedis();
    const log = pino({ level: "info" }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
    const env = { REDIS_URL: `redis://127.0.0.1:${port}` };
    // a fans out (its dispatcher runs); b hears of events only through Redis, or the log.
    a = await startTestApp(env, { log, workers: [DISPATCHER_NAME] });
    b = await startTestApp(env, { log, database: a.database });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await stopRedis();
  });

  it("still serves requests and live events, logs the outage once each way, and loses nothing once it is back", async () => {
    const applicationId = newId();
    const collect = async (t: TestApp) => {
      const got: string[] = [];
      const iterator = await t.app.events.subscribe((e) => e.applicationId === applicationId);
      void (async () => {
        for await (const e of iterator) got.push(e.eventId);
      })();
      return { got, stop: () => iterator.return?.() };
    };
    const onA = await collect(a);
    const onB = await collect(b);
    const commit = () =>
      a.app.db.prisma.$transaction((tx) =>
        recordEvent(
          tx,
          "vulnerability.created",
          { id: newId(), severity: "high", applicationId, title: "x", createdAt: new Date().toISOString() },
          { applicationId },
        ),
      );

    const before = await commit();
    await eventually(async () => onA.got.includes(before) && onB.got.includes(before));

    await stopRedis();
    const during = [await commit(), await commit(), await commit()];
    // Served: the rate limit counts in this process meanwhile.
    for (const t of [a, b]) expect((await t.request("GET", "/applications")).status).toBe(200);
    // On the instance that fans them out, subscribers get them without Redis.
    await eventually(async () => during.every((id) => onA.got.includes(id)));
    await eventually(async () => logLines.some((l) => l.msg.startsWith("redis unreachable")));

    await startRedis();
    await eventually(async () => logLines.filter((l) => l.msg === "redis reachable again").length >= 2, 10_000); // a's and b's clients
    // b missed them while Redis was away: it reads them from the log once its subscription is back.
    await eventually(async () => during.every((id) => onB.got.includes(id)), 10_000);
    const after = await commit();
    await eventually(async () => onA.got.includes(after) && onB.got.includes(after));

    for (const seen of [onA, onB]) expect(seen.got).toEqual([before, ...during, after]);
    void onA.stop();
    void onB.stop();
    // Once each way per instance: not once per reconnection attempt.
    expect(logLines.filter((l) => l.msg.startsWith("redis unreachable"))).toHaveLength(2);
    expect(logLines.filter((l) => l.msg === "redis reachable again")).toHaveLength(2);
    expect(logLines.filter((l) => l.level >= 50)).toEqual([]);
  }, 60_000);
});
