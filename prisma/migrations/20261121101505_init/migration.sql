-- CreateEnum
CREATE TYPE "Criticality" AS ENUM ('low', 'medium', 'high', 'critical');

-- CreateEnum
CREATE TYPE "ScanType" AS ENUM ('sast', 'dast', 'sca', 'container');

-- CreateEnum
CREATE TYPE "ScanStatus" AS ENUM ('queued', 'running', 'completed', 'failed');

-- CreateEnum
CREATE TYPE "Severity" AS ENUM ('low', 'medium', 'high', 'critical');

-- CreateEnum
CREATE TYPE "VulnerabilityStatus" AS ENUM ('open', 'in_progress', 'resolved', 'accepted');

-- CreateEnum
CREATE TYPE "PolicyAction" AS ENUM ('allow', 'block', 'monitor');

-- CreateEnum
CREATE TYPE "WebhookStatus" AS ENUM ('active', 'disabled', 'error');

-- CreateEnum
CREATE TYPE "DeliveryStatus" AS ENUM ('pending', 'delivered', 'dropped', 'failed', 'cancelled');

-- CreateTable
CREATE TABLE "applications" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "criticality" "Criticality" NOT NULL DEFAULT 'medium',
    "owner" TEXT,
    "repo_url" TEXT,
    "service_url" TEXT,
    "language" TEXT,
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "applications_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scans" (
    "id" UUID NOT NULL,
    "application_id" UUID NOT NULL,
    "scan_type" "ScanType" NOT NULL,
    "status" "ScanStatus" NOT NULL DEFAULT 'queued',
    "triggered_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "started_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "summary" JSONB,
    "error" TEXT,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "run_attempts" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "scans_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "vulnerabilities" (
    "id" UUID NOT NULL,
    "application_id" UUID NOT NULL,
    "scan_id" UUID NOT NULL,
    "scan_type" "ScanType" NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "severity" "Severity" NOT NULL,
    "cwe" TEXT NOT NULL,
    "cve" TEXT,
    "cvss_score" DOUBLE PRECISION NOT NULL,
    "status" "VulnerabilityStatus" NOT NULL DEFAULT 'open',
    "introduced_in" TEXT NOT NULL,
    "remediation" TEXT NOT NULL,
    "package_name" TEXT,
    "package_version" TEXT,
    "location" TEXT,
    "last_seen_scan_id" UUID,
    "resolved_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "vulnerabilities_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "policies" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "action" "PolicyAction" NOT NULL,
    "all_applications" BOOLEAN NOT NULL DEFAULT true,
    "application_ids" UUID[] DEFAULT ARRAY[]::UUID[],
    "vulnerability_severity" "Severity",
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "policies_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhooks" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "secret" TEXT NOT NULL,
    "status" "WebhookStatus" NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "events" (
    "id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "application_id" UUID,
    "data" JSONB NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "fanned_out_at" TIMESTAMPTZ(3),

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "webhook_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'pending',
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "first_attempt_at" TIMESTAMPTZ(3),
    "next_attempt_at" TIMESTAMPTZ(3),
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delivery_attempts" (
    "id" UUID NOT NULL,
    "delivery_id" UUID NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL,
    "status_code" INTEGER,
    "duration_ms" INTEGER NOT NULL,
    "error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3),

    CONSTRAINT "delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "applications_name_key" ON "applications"("name");

-- CreateIndex
CREATE INDEX "applications_created_at_id_idx" ON "applications"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "applications_owner_idx" ON "applications"("owner");

-- CreateIndex
CREATE INDEX "applications_tags_idx" ON "applications" USING GIN ("tags");

-- CreateIndex
CREATE INDEX "scans_application_id_created_at_id_idx" ON "scans"("application_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "scans_status_lease_expires_at_idx" ON "scans"("status", "lease_expires_at");

-- CreateIndex
CREATE INDEX "vulnerabilities_application_id_created_at_id_idx" ON "vulnerabilities"("application_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "vulnerabilities_application_id_status_severity_idx" ON "vulnerabilities"("application_id", "status", "severity");

-- CreateIndex
CREATE INDEX "vulnerabilities_created_at_id_idx" ON "vulnerabilities"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "vulnerabilities_application_id_fingerprint_key" ON "vulnerabilities"("application_id", "fingerprint");

-- CreateIndex
CREATE UNIQUE INDEX "policies_name_key" ON "policies"("name");

-- CreateIndex
CREATE INDEX "policies_created_at_id_idx" ON "policies"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "policies_application_ids_idx" ON "policies" USING GIN ("application_ids");

-- CreateIndex
CREATE INDEX "webhooks_created_at_id_idx" ON "webhooks"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_fanned_out_at_occurred_at_idx" ON "events"("fanned_out_at", "occurred_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_webhook_id_created_at_id_idx" ON "webhook_deliveries"("webhook_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "delivery_attempts_delivery_id_attempted_at_idx" ON "delivery_attempts"("delivery_id", "attempted_at");

-- AddForeignKey
ALTER TABLE "scans" ADD CONSTRAINT "scans_application_id_fkey" FOREIGN KEY ("application_id") REFERENCES "applications"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "vulnerabilities" ADD CONSTRAINT "vulnerabilities_application_id_fkey" FOREIGN KEY ("application_id") REFERENCES "applications"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "vulnerabilities" ADD CONSTRAINT "vulnerabilities_scan_id_fkey" FOREIGN KEY ("scan_id") REFERENCES "scans"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;
