-- The audit trail's events (application.*, policy.*, webhook.*; CONTRACT §17) outlive the others:
-- retention leaves them behind the log's mark until AUDIT_RETENTION_DAYS, and deletes them up to
-- this second mark, which a read of audit types alone starts from and expires its cursors by
-- (src/events/event-retention.ts, src/events/event-log.ts).
ALTER TABLE "event_log_retention" ADD COLUMN "audit_pruned_through" BIGINT NOT NULL DEFAULT 0;
