-- Webhook delivery in batches.

-- Every delivery row is written three times (queued, leased, recorded): fewer indexes to maintain,
-- and room on each page so that taking a lease (no indexed column changes) is a HOT update. The
-- partial indexes of 20261121101600 serve the dispatcher's queries on the rows still to do.
DROP INDEX "events_fanned_out_at_occurred_at_idx";
DROP INDEX "webhook_deliveries_status_next_attempt_at_idx";
ALTER TABLE "webhook_deliveries" SET (fillfactor = 80);

-- Each event knows the transaction that wrote it: the outbox sends one NOTIFY per committing
-- transaction with that id, and live listeners load all of its events in one query.
ALTER TABLE "events" ADD COLUMN "tx_id" BIGINT NOT NULL DEFAULT (pg_current_xact_id())::text::bigint;
CREATE INDEX "events_tx_id_idx" ON "events"("tx_id");

-- Our ids are UUIDv7 (time-ordered): made in SQL too, so that fan-out queues the deliveries in the
-- statement that claims the events. A random (v4) UUID whose first 48 bits become the Unix time in
-- milliseconds and whose version nibble becomes 7 (bits 52 and 53 set on top of v4's 0100).
CREATE FUNCTION uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;

-- Claiming per subscription: its due retries first, then its fresh deliveries, each in due order.
-- Prisma's schema language cannot express partial indexes, so they are written here by hand.
CREATE INDEX "webhook_deliveries_retries_due" ON "webhook_deliveries" ("webhook_id", "next_attempt_at", "id")
  WHERE "status" = 'pending' AND "attempt_count" > 0;
CREATE INDEX "webhook_deliveries_fresh_due" ON "webhook_deliveries" ("webhook_id", "next_attempt_at", "id")
  WHERE "status" = 'pending' AND "attempt_count" = 0;
