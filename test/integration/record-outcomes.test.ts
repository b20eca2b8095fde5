// The one statement that records a batch of attempt outcomes, against a real Postgres: what it
// changes, what it leaves alone, and that one odd delivery cannot fail the others.
import { openDatabase, type Database } from "../../src/db/client.ts";
import { recordOutcomes, type Outcome } from "../../src/dispatcher/record-outcomes.ts";
import { newId } from "../../src/ids.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";

let database: TestDatabase;
let db: Database;
beforeAll(async () => {
  database = await createTestDatabase();
  db = openDatabase(database.url, database.options);
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

const OWNER = "this-instance";

async function webhook(status: "active" | "error" = "active"): Promise<string> {
  const id = newId();
  await db.pool.query(
    "INSERT INTO webhooks (id, name, url, events, sealed_secret, status, created_at, updated_at) VALUES ($1, $2, 'https://hooks.example.com/x', '{scan.completed}', 'plain:s', $3, now(), now())",
    [id, `hook-${id}`, status],
  );
  return id;
}

/** A pending delivery of a new event to `webhookId`, leased by `owner`. */
async function leasedDelivery(webhookId: string, owner = OWNER): Promise<string> {
  const eventId = newId();
  const id = newId();
  await db.pool.query("INSERT INTO events (id, type, data, occurred_at) VALUES ($1, 'scan.completed', '{}', now())", [
    eventId,
  ]);
  await db.pool.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, event_id, status, next_attempt_at, lease_owner, lease_expires_at, created_at, updated_at)
     VALUES ($1, $2, $3, 'pending', now(), $4, now() + interval '1 minute', now(), now())`,
    [id, webhookId, eventId, owner],
  );
  return id;
}

function outcome(
  deliveryId: string,
  webhookId: string,
  status: Outcome["status"],
  attemptedAt = new Date(),
  statusCode = 200,
): Outcome {
  return {
    deliveryId,
    webhookId,
    status,
    nextAttemptAt: status === "pending" ? new Date(Date.now() + 60_000) : null,
    attempt: { id: newId(), attemptedAt, firstAttemptAt: attemptedAt, statusCode, durationMs: 12, error: null },
  };
}

const delivery = async (id: string) =>
  (
    await db.pool.query(
      "SELECT status::text, attempt_count, next_attempt_at, lease_owner FROM webhook_deliveries WHERE id = $1",
      [id],
    )
  ).rows[0];
const attemptsOf = async (id: string) =>
  (await db.pool.query("SELECT status_code FROM delivery_attempts WHERE delivery_id = $1", [id])).rows;
const statusOf = async (webhookId: string) =>
  (await db.pool.query("SELECT status::text FROM webhooks WHERE id = $1", [webhookId])).rows[0]?.status;

it("writes each attempt and the new state of each delivery it still holds, and frees the lease", async () => {
  const hook = await webhook();
  const [a, b] = [await leasedDelivery(hook), await leasedDelivery(hook)];
  const recorded = await recordOutcomes(db.pool, OWNER, [
    outcome(a, hook, "delivered"),
    outcome(b, hook, "pending", new Date(), 503),
  ]);
  expect(new Map(recorded.map((r) => [r.id, r.status]))).toEqual(
    new Map([
      [a, "delivered"],
      [b, "pending"],
    ]),
  );
  expect(await delivery(a)).toMatchObject({
    status: "delivered",
    attempt_count: 1,
    next_attempt_at: null,
    lease_owner: null,
  });
  expect(await delivery(b)).toMatchObject({ status: "pending", attempt_count: 1, lease_owner: null });
  expect((await delivery(b)).next_attempt_at.getTime()).toBeGreaterThan(Date.now());
  expect(await attemptsOf(b)).toEqual([{ status_code: 503 }]);
});

it("logs the attempt but changes nothing for a delivery whose lease another instance took, or that was cancelled", async () => {
  const hook = await webhook();
  const takenOver = await leasedDelivery(hook, "another-instance");
  const cancelled = await leasedDelivery(hook);
  await db.pool.query("UPDATE webhook_deliveries SET status = 'cancelled' WHERE id = $1", [cancelled]);
  const recorded = await recordOutcomes(db.pool, OWNER, [
    outcome(takenOver, hook, "delivered"),
    outcome(cancelled, hook, "delivered"),
  ]);
  expect(recorded).toEqual([]);
  expect(await delivery(takenOver)).toMatchObject({
    status: "pending",
    attempt_count: 0,
    lease_owner: "another-instance",
  });
  expect(await delivery(cancelled)).toMatchObject({ status: "cancelled", attempt_count: 0 });
  expect(await attemptsOf(takenOver)).toHaveLength(1);
});

it("records the rest of a batch when one delivery was deleted with its subscription meanwhile", async () => {
  const doomed = await webhook();
  const kept = await webhook();
  const gone = await leasedDelivery(doomed);
  const other = await leasedDelivery(kept);
  await db.pool.query("DELETE FROM webhooks WHERE id = $1", [doomed]);
  const recorded = await recordOutcomes(db.pool, OWNER, [
    outcome(gone, doomed, "delivered"),
    outcome(other, kept, "delivered"),
  ]);
  expect(recorded).toEqual([{ id: other, status: "delivered" }]);
  expect(await attemptsOf(gone)).toEqual([]);
});

it("turns a subscription `error` when a delivery is given up and `active` again by the latest outcome of the batch", async () => {
  const hook = await webhook();
  const [first, second] = [await leasedDelivery(hook), await leasedDelivery(hook)];
  await recordOutcomes(db.pool, OWNER, [outcome(first, hook, "failed", new Date(), 500)]);
  expect(await statusOf(hook)).toBe("error");

  const [third, fourth] = [await leasedDelivery(hook), await leasedDelivery(hook)];
  const earlier = new Date(Date.now() - 1000);
  await recordOutcomes(db.pool, OWNER, [
    outcome(second, hook, "failed", earlier, 500),
    outcome(third, hook, "delivered"),
  ]);
  expect(await statusOf(hook)).toBe("active");
  await recordOutcomes(db.pool, OWNER, [
    outcome(fourth, hook, "delivered", earlier),
    outcome(await leasedDelivery(hook), hook, "failed", new Date(), 500),
  ]);
  expect(await statusOf(hook)).toBe("error");

  const disabled = await webhook();
  await db.pool.query("UPDATE webhooks SET status = 'disabled' WHERE id = $1", [disabled]);
  await recordOutcomes(db.pool, OWNER, [outcome(await leasedDelivery(disabled), disabled, "delivered")]);
  expect(await statusOf(disabled)).toBe("disabled"); // never re-enabled by a delivery
});
