-- An index of every pending delivery misled the planner when recording outcomes: with statistics
-- from before a burst it expected a few pending rows, scanned all of them (tens of thousands) for
-- each batch of outcomes instead of looking the batch up by primary key, and a burst drained at
-- two thirds of its rate. Only the next retry's time needs an index of its own, over the rows
-- waiting for a retry; fresh and retrying deliveries per subscription have theirs
-- (webhook_deliveries_fresh_due and webhook_deliveries_retries_due).
DROP INDEX "webhook_deliveries_due";
CREATE INDEX "webhook_deliveries_retry_schedule" ON "webhook_deliveries" ("next_attempt_at")
  WHERE "status" = 'pending' AND "attempt_count" > 0;

-- Fan-out takes the oldest events not yet fanned out, in (occurred_at, id) order: an index in that
-- order lets it read just its batch, where one on occurred_at alone sorted every event still
-- waiting (all of a large transaction's share one timestamp) for each batch of 500.
DROP INDEX "events_pending_fanout";
CREATE INDEX "events_pending_fanout" ON "events" ("occurred_at", "id") WHERE "fanned_out_at" IS NULL;
