-- One queued or running scan per application and scan type (CONTRACT §5): racing triggers
-- resolve in the database, exactly one wins. Prisma's schema language cannot express a partial
-- index, so it is written here by hand.
CREATE UNIQUE INDEX "scans_one_active_per_type" ON "scans" ("application_id", "scan_type")
  WHERE "status" IN ('queued', 'running');

-- Claiming work: the dispatcher and the runner scan only the rows still to do.
CREATE INDEX "events_pending_fanout" ON "events" ("occurred_at") WHERE "fanned_out_at" IS NULL;
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries" ("next_attempt_at") WHERE "status" = 'pending';
