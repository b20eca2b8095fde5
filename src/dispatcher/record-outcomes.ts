// Records the outcomes of many attempts in one statement: the attempt log rows, each delivery's new
// state (only while this instance still holds its lease and it is still pending: a subscription
// disabled meanwhile has cancelled it for good), and the subscriptions' health (given up → `error`,
// delivered → `active` again, by the latest outcome of each). One statement is atomic on its own.
// A delivery deleted meanwhile (with its subscription) gets no log row, so it cannot fail the batch.
import type pg from "pg";

export type RecordedStatus = "pending" | "delivered" | "dropped" | "failed" | "cancelled";

export interface Outcome {
  deliveryId: string;
  webhookId: string;
  /** The delivery's new state; `pending` means a retry at `nextAttemptAt`. */
  status: RecordedStatus;
  nextAttemptAt: Date | null;
  /** Absent when nothing was sent (a delivery cancelled because its subscription is disabled). */
  attempt?: {
    id: string;
    attemptedAt: Date;
    firstAttemptAt: Date;
    statusCode: number | null;
    durationMs: number;
    error: string | null;
  };
}

const RECORD = `
  WITH outcome AS (
    SELECT * FROM unnest($2::uuid[], $3::uuid[], $4::"DeliveryStatus"[], $5::timestamptz[], $6::uuid[],
                         $7::timestamptz[], $8::timestamptz[], $9::int[], $10::int[], $11::text[])
      AS o(delivery_id, webhook_id, status, next_attempt_at, attempt_id, attempted_at, first_attempt_at, status_code, duration_ms, error)
  ),
  logged AS (
    INSERT INTO delivery_attempts (id, delivery_id, attempted_at, status_code, duration_ms, error, next_attempt_at)
    SELECT attempt_id, delivery_id, attempted_at, status_code, duration_ms, error, next_attempt_at
      FROM outcome o
     WHERE attempt_id IS NOT NULL AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = o.delivery_id)
  ),
  updated AS (
    UPDATE webhook_deliveries d
       SET status = o.status,
           attempt_count = d.attempt_count + (o.attempt_id IS NOT NULL)::int,
           first_attempt_at = coalesce(d.first_attempt_at, o.first_attempt_at),
           next_attempt_at = o.next_attempt_at,
           lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
      FROM outcome o
     WHERE d.id = o.delivery_id AND d.lease_owner = $1 AND d.status = 'pending'
    RETURNING d.id, o.webhook_id, o.status, o.attempted_at
  ),
  health AS (
    SELECT DISTINCT ON (webhook_id) webhook_id, status
      FROM updated WHERE status IN ('delivered', 'failed')
     ORDER BY webhook_id, attempted_at DESC
  ),
  turned AS (
    UPDATE webhooks w SET status = CASE WHEN h.status = 'failed' THEN 'error' ELSE 'active' END::"WebhookStatus", updated_at = now()
      FROM health h
     WHERE w.id = h.webhook_id
       AND ((h.status = 'failed' AND w.status = 'active') OR (h.status = 'delivered' AND w.status = 'error'))
  )
  SELECT id, status::text FROM updated`;

/** Records outcomes; returns those that changed their delivery (the others lost their lease or were cancelled). */
export async function recordOutcomes(
  pool: pg.Pool,
  owner: string,
  outcomes: readonly Outcome[],
): Promise<{ id: string; status: RecordedStatus }[]> {
  if (outcomes.length === 0) return [];
  const column = <T>(pick: (o: Outcome) => T) => outcomes.map(pick);
  const { rows } = await pool.query<{ id: string; status: RecordedStatus }>({
    name: "record-outcomes",
    text: RECORD,
    values: [
      owner,
      column((o) => o.deliveryId),
      column((o) => o.webhookId),
      column((o) => o.status),
      column((o) => o.nextAttemptAt),
      column((o) => o.attempt?.id ?? null),
      column((o) => o.attempt?.attemptedAt ?? null),
      column((o) => o.attempt?.firstAttemptAt ?? null),
      column((o) => o.attempt?.statusCode ?? null),
      column((o) => o.attempt?.durationMs ?? null),
      column((o) => o.attempt?.error ?? null),
    ],
  });
  return rows;
}
