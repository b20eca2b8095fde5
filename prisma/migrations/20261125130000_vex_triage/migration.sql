-- Triage as documents (CONTRACT §13): the ids a vulnerability is known by (what VEX statements
-- match), the decision in force, every change of status on record, and the VEX statements kept
-- for the findings that appear later.
CREATE TYPE "ChangeSource" AS ENUM ('scan', 'report', 'vex');

ALTER TABLE "vulnerabilities"
  ADD COLUMN "aliases" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
  ADD COLUMN "analysis" JSONB;

-- Until now a finding's ids were reduced to its CVE.
UPDATE "vulnerabilities" SET "aliases" = ARRAY["cve"] WHERE "cve" IS NOT NULL;

CREATE TABLE "vulnerability_changes" (
    "id" BIGSERIAL NOT NULL,
    "vulnerability_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "from_status" "VulnerabilityStatus",
    "to_status" "VulnerabilityStatus" NOT NULL,
    "source" "ChangeSource" NOT NULL,
    "scan_id" UUID,
    "by" TEXT,
    "justification" TEXT,
    "detail" TEXT,

    CONSTRAINT "vulnerability_changes_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "vulnerability_changes_vulnerability_id_id_idx" ON "vulnerability_changes"("vulnerability_id", "id");

ALTER TABLE "vulnerability_changes" ADD CONSTRAINT "vulnerability_changes_vulnerability_id_fkey"
  FOREIGN KEY ("vulnerability_id") REFERENCES "vulnerabilities"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The history of what exists already, as far as the rows tell it: each vulnerability's creation by
-- the scan that found it, and the status it has now when that is no longer `open`.
INSERT INTO "vulnerability_changes" ("vulnerability_id", "at", "from_status", "to_status", "source", "scan_id", "by")
SELECT v."id", v."created_at", NULL, 'open',
       CASE WHEN s."source_kind" = 'report' THEN 'report' ELSE 'scan' END::"ChangeSource", v."scan_id", s."triggered_by"
  FROM "vulnerabilities" v JOIN "scans" s ON s."id" = v."scan_id"
 ORDER BY v."created_at", v."id";
INSERT INTO "vulnerability_changes" ("vulnerability_id", "at", "from_status", "to_status", "source", "scan_id")
SELECT v."id", COALESCE(v."resolved_at", v."updated_at"), 'open', v."status", 'scan', v."last_seen_scan_id"
  FROM "vulnerabilities" v
 WHERE v."status" <> 'open'
 ORDER BY v."updated_at", v."id";

CREATE TABLE "vex_statements" (
    "id" UUID NOT NULL,
    "application_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "vulnerability_ids" TEXT[],
    "products" TEXT[],
    "status" "VulnerabilityStatus" NOT NULL,
    "analysis" JSONB NOT NULL,
    "by" TEXT NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "vex_statements_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "vex_statements_application_id_key_key" ON "vex_statements"("application_id", "key");

ALTER TABLE "vex_statements" ADD CONSTRAINT "vex_statements_application_id_fkey"
  FOREIGN KEY ("application_id") REFERENCES "applications"("id") ON DELETE CASCADE ON UPDATE CASCADE;
