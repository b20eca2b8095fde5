-- The live feed reads a committed transaction's events in pages, in the order they happened (a
-- scanner's report may commit 100,000 at once): the index serves each page directly.
DROP INDEX "events_tx_id_idx";
CREATE INDEX "events_tx_id_occurred_at_id_idx" ON "events"("tx_id", "occurred_at", "id");
