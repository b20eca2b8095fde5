-- The event log (CONTRACT §14): every event gets its place in the log, `position`, when it is fanned
-- out, which happens only after its transaction has committed. Fan-outs run one at a time (each holds
-- the event_log_head row while it numbers its batch), so positions are assigned, and become visible,
-- in the order transactions became visible: a reader that has seen position P will only ever find
-- new events after P, however long a transaction was open before it committed. Cursors are positions.
ALTER TABLE "events" ADD COLUMN "position" BIGINT;

-- What was already fanned out, numbered in the order it was.
WITH ordered AS (
  SELECT id, row_number() OVER (ORDER BY fanned_out_at, occurred_at, id) AS position
    FROM events WHERE fanned_out_at IS NOT NULL
)
UPDATE events e SET position = o.position FROM ordered o WHERE e.id = o.id;

CREATE UNIQUE INDEX "events_position_key" ON "events" ("position");

-- The last position handed out. One row, locked by the fan-out that numbers the next batch.
CREATE TABLE "event_log_head" (
  "id" BOOLEAN NOT NULL DEFAULT true,
  "position" BIGINT NOT NULL,
  CONSTRAINT "event_log_head_pkey" PRIMARY KEY ("id")
);
INSERT INTO "event_log_head" ("position") SELECT coalesce(max(position), 0) FROM events;

-- Retention (EVENT_RETENTION_DAYS) has deleted the log up to and including this position: a cursor
-- before it has expired. A row of its own, so that retention never waits on the fan-out's lock.
CREATE TABLE "event_log_retention" (
  "id" BOOLEAN NOT NULL DEFAULT true,
  "pruned_through" BIGINT NOT NULL,
  CONSTRAINT "event_log_retention_pkey" PRIMARY KEY ("id")
);
INSERT INTO "event_log_retention" ("pruned_through") VALUES (0);
-- Planned as the one-row tables they are from the start (never analyzed, they would be estimated at
-- thousands of rows).
ANALYZE "event_log_head", "event_log_retention";

-- Live subscribers read the log by position now, not a transaction's events by its id.
DROP INDEX "events_tx_id_occurred_at_id_idx";

-- Deleting an old event deletes its deliveries (ON DELETE CASCADE) and retention asks whether any is
-- still pending: both look deliveries up by event.
CREATE INDEX "webhook_deliveries_event_id_idx" ON "webhook_deliveries" ("event_id");
