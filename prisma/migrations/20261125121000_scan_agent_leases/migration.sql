-- Scan agents (CONTRACT §12) claim running scans with leases of their own: the agent's name, the
-- claim's id (a fencing token: a lease that lapsed and was claimed again is another claim) and its
-- length in seconds, which heartbeats extend it by. All three are null for the scan runner's leases
-- and for scans no agent holds; `lease_owner` holds the agent's token subject.
ALTER TABLE "scans"
  ADD COLUMN "agent" TEXT,
  ADD COLUMN "lease_id" UUID,
  ADD COLUMN "lease_seconds" INTEGER;
