-- Remediation deadlines (CONTRACT §19). The SLA is one document (sla_settings, a single row); a
-- vulnerability's deadline is never stored, only its clock: `sla_clock_base`, when its clock started
-- (first found, or found again after resolved) moved later by every pause that has ended, and
-- `sla_paused_at` while it is accepted. Its deadline is sla_clock_base + the SLA's days for its
-- severity and its application's criticality, so a change of the SLA moves every deadline at once
-- without a row rewritten. Neither column is indexed: a decision's update stays HOT (fillfactor 50,
-- 20261129100000_vulnerabilities_hot_updates).
--
-- The trigger below keeps the clock on every write of every writer (a scan's findings, a VEX, an
-- expiry), so no new writer can forget it, and keeps sla_deadlines: one row per open or in-progress
-- vulnerability whose breach has not yet been told, what the deadline watcher reads by severity and
-- clock (src/domain/sla/deadline-watcher.ts). Telling a breach deletes its row in the transaction
-- that records the event: once, whatever the instances.
CREATE TABLE "sla_settings" (
  "id"         BOOLEAN PRIMARY KEY DEFAULT true CHECK ("id"),
  "document"   JSONB NOT NULL,
  "updated_at" TIMESTAMPTZ(3) NOT NULL
);
INSERT INTO "sla_settings" ("document", "updated_at") VALUES (
  '{"days": {"critical": 7, "high": 30, "medium": 90, "low": 120}, "byCriticality": {}, "dueSoonDays": 3}',
  now()
);

ALTER TABLE "vulnerabilities"
  ADD COLUMN "sla_clock_base" TIMESTAMPTZ(3),
  ADD COLUMN "sla_paused_at" TIMESTAMPTZ(3);
UPDATE "vulnerabilities"
   SET "sla_clock_base" = "created_at",
       "sla_paused_at" = CASE WHEN "status" = 'accepted' THEN "updated_at" END;
ALTER TABLE "vulnerabilities" ALTER COLUMN "sla_clock_base" SET NOT NULL,
  ALTER COLUMN "sla_clock_base" SET DEFAULT CURRENT_TIMESTAMP; -- what the trigger replaces

-- With the application's criticality, so that each of the 16 pairs of severity and criticality has
-- one deadline (one days figure) and the watcher reads exactly the due rows of each off the index.
CREATE TABLE "sla_deadlines" (
  "vulnerability_id" UUID PRIMARY KEY REFERENCES "vulnerabilities" ("id") ON DELETE CASCADE,
  "severity"         "Severity" NOT NULL,
  "criticality"      "Criticality" NOT NULL,
  "clock_base"       TIMESTAMPTZ(3) NOT NULL
);
CREATE INDEX "sla_deadlines_severity_criticality_clock_base_idx" ON "sla_deadlines" ("severity", "criticality", "clock_base");
INSERT INTO "sla_deadlines" ("vulnerability_id", "severity", "criticality", "clock_base")
SELECT v."id", v."severity", a."criticality", v."sla_clock_base"
  FROM "vulnerabilities" v JOIN "applications" a ON a."id" = v."application_id"
 WHERE v."status" IN ('open', 'in_progress');

-- The clock (BEFORE): a change's moment is the row's new updated_at (every writer sets it to the
-- change's time), or now() when a writer left it as it was.
CREATE FUNCTION "vulnerability_sla_clock"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
DECLARE
  at TIMESTAMPTZ(3);
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.sla_clock_base := NEW.created_at;
    NEW.sla_paused_at := CASE WHEN NEW.status = 'accepted' THEN NEW.created_at END;
    RETURN NEW;
  END IF;
  IF NEW.status = OLD.status THEN
    RETURN NEW;
  END IF;
  at := CASE WHEN NEW.updated_at IS DISTINCT FROM OLD.updated_at THEN NEW.updated_at ELSE now() END;
  IF OLD.status = 'resolved' THEN
    -- Found again (or reopened) after it was resolved: a new clock.
    NEW.sla_clock_base := at;
    NEW.sla_paused_at := CASE WHEN NEW.status = 'accepted' THEN at END;
  ELSIF OLD.status = 'accepted' THEN
    -- The pause ends: the time spent accepted does not count.
    NEW.sla_clock_base := OLD.sla_clock_base + greatest(at - OLD.sla_paused_at, interval '0');
    NEW.sla_paused_at := NULL;
  ELSIF NEW.status = 'accepted' THEN
    NEW.sla_paused_at := at;
  END IF;
  RETURN NEW;
END
$$;

-- The deadlines to tell (AFTER): a row while open or in progress, made anew when its clock changes.
CREATE FUNCTION "vulnerability_sla_deadline"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IN ('open', 'in_progress') THEN
    IF TG_OP = 'INSERT' OR OLD.status NOT IN ('open', 'in_progress') OR NEW.sla_clock_base <> OLD.sla_clock_base THEN
      INSERT INTO sla_deadlines (vulnerability_id, severity, criticality, clock_base)
      SELECT NEW.id, NEW.severity, a.criticality, NEW.sla_clock_base FROM applications a WHERE a.id = NEW.application_id
      ON CONFLICT (vulnerability_id) DO UPDATE
        SET severity = EXCLUDED.severity, criticality = EXCLUDED.criticality, clock_base = EXCLUDED.clock_base;
    END IF;
  ELSIF TG_OP = 'UPDATE' AND OLD.status IN ('open', 'in_progress') THEN
    DELETE FROM sla_deadlines WHERE vulnerability_id = NEW.id;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "vulnerabilities_sla_clock" BEFORE INSERT OR UPDATE OF "status" ON "vulnerabilities"
  FOR EACH ROW EXECUTE FUNCTION "vulnerability_sla_clock"();
CREATE TRIGGER "vulnerabilities_sla_deadline" AFTER INSERT OR UPDATE OF "status" ON "vulnerabilities"
  FOR EACH ROW EXECUTE FUNCTION "vulnerability_sla_deadline"();

-- An application's criticality moves its open vulnerabilities' deadlines to the pair of the new one.
CREATE FUNCTION "application_sla_criticality"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.criticality IS DISTINCT FROM OLD.criticality THEN
    UPDATE sla_deadlines d SET criticality = NEW.criticality
      FROM vulnerabilities v WHERE v.application_id = NEW.id AND d.vulnerability_id = v.id;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER "applications_sla_criticality" AFTER UPDATE OF "criticality" ON "applications"
  FOR EACH ROW EXECUTE FUNCTION "application_sla_criticality"();


-- Decisions that expire: an accepting decision with an end (analysis.expiresAt) is a row here while
-- it is in force, kept by the trigger below; the deadline watcher reopens the vulnerability when it
-- ends, deleting the row in the same transaction (history source 'expiry').
ALTER TYPE "ChangeSource" ADD VALUE 'expiry';
CREATE TABLE "decision_expiries" (
  "vulnerability_id" UUID PRIMARY KEY REFERENCES "vulnerabilities" ("id") ON DELETE CASCADE,
  "expires_at"       TIMESTAMPTZ(3) NOT NULL
);
CREATE INDEX "decision_expiries_expires_at_idx" ON "decision_expiries" ("expires_at");

CREATE FUNCTION "vulnerability_decision_expiry"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'accepted' AND NEW.analysis ? 'expiresAt' THEN
    INSERT INTO decision_expiries (vulnerability_id, expires_at)
    VALUES (NEW.id, (NEW.analysis ->> 'expiresAt')::timestamptz)
    ON CONFLICT (vulnerability_id) DO UPDATE SET expires_at = EXCLUDED.expires_at;
  ELSIF TG_OP = 'UPDATE' AND OLD.analysis ? 'expiresAt' THEN
    -- A later decision replaced it: its end with it.
    DELETE FROM decision_expiries WHERE vulnerability_id = NEW.id;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER "vulnerabilities_decision_expiry" AFTER INSERT OR UPDATE OF "status", "analysis" ON "vulnerabilities"
  FOR EACH ROW EXECUTE FUNCTION "vulnerability_decision_expiry"();

-- A policy condition (CONTRACT §19): only vulnerabilities past their remediation deadline match.
ALTER TABLE "policies" ADD COLUMN "sla_breached" BOOLEAN NOT NULL DEFAULT false;
