-- A deadline told keeps its row, marked `told`, instead of losing it. Re-arming after `PUT /sla`
-- (a deadline told and moved back into the future is told again when it passes) then reads the
-- told rows of each pair off an index range, instead of every open vulnerability against the
-- deadlines' table (1 s at 1,000,000 vulnerabilities, bench/notes/2026-12-03-sla.md).
ALTER TABLE "sla_deadlines" ADD COLUMN "told" BOOLEAN NOT NULL DEFAULT false;
INSERT INTO "sla_deadlines" ("vulnerability_id", "severity", "criticality", "clock_base", "told")
SELECT v."id", v."severity", a."criticality", v."sla_clock_base", true
  FROM "vulnerabilities" v JOIN "applications" a ON a."id" = v."application_id"
 WHERE v."status" IN ('open', 'in_progress')
ON CONFLICT ("vulnerability_id") DO NOTHING;

DROP INDEX "sla_deadlines_severity_criticality_clock_base_idx";
CREATE INDEX "sla_deadlines_to_tell_idx" ON "sla_deadlines" ("severity", "criticality", "clock_base") WHERE NOT "told";
CREATE INDEX "sla_deadlines_told_idx" ON "sla_deadlines" ("severity", "criticality", "clock_base") WHERE "told";

-- The deadline's length for a pair, in milliseconds, as sla-clock.ts computes it.
CREATE FUNCTION "sla_length_ms"(document JSONB, severity "Severity", criticality "Criticality") RETURNS BIGINT
  LANGUAGE sql IMMUTABLE AS $$
    SELECT floor(86400000 * coalesce(document -> 'byCriticality' -> criticality::text ->> severity::text,
                                     document -> 'days' ->> severity::text)::double precision)::bigint
$$;

-- A new clock is a deadline to tell.
CREATE OR REPLACE FUNCTION "vulnerability_sla_deadline"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IN ('open', 'in_progress') THEN
    IF TG_OP = 'INSERT' OR OLD.status NOT IN ('open', 'in_progress') OR NEW.sla_clock_base <> OLD.sla_clock_base THEN
      INSERT INTO sla_deadlines (vulnerability_id, severity, criticality, clock_base)
      SELECT NEW.id, NEW.severity, a.criticality, NEW.sla_clock_base FROM applications a WHERE a.id = NEW.application_id
      ON CONFLICT (vulnerability_id) DO UPDATE
        SET severity = EXCLUDED.severity, criticality = EXCLUDED.criticality, clock_base = EXCLUDED.clock_base,
            told = false;
    END IF;
  ELSIF TG_OP = 'UPDATE' AND OLD.status IN ('open', 'in_progress') THEN
    DELETE FROM sla_deadlines WHERE vulnerability_id = NEW.id;
  END IF;
  RETURN NULL;
END
$$;

-- Another criticality, another deadline: a told one now in the future is to be told again.
CREATE OR REPLACE FUNCTION "application_sla_criticality"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.criticality IS DISTINCT FROM OLD.criticality THEN
    UPDATE sla_deadlines d
       SET criticality = NEW.criticality,
           told = d.told AND d.clock_base + sla_length_ms(s.document, d.severity, NEW.criticality) * interval '1 millisecond' <= now()
      FROM vulnerabilities v, sla_settings s
     WHERE v.application_id = NEW.id AND d.vulnerability_id = v.id;
  END IF;
  RETURN NULL;
END
$$;
