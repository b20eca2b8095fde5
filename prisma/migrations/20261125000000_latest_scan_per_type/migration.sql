-- Application.latestScans reads each application's newest scan of each type: one probe of this
-- index per (application, type), however many scans an application has run.
CREATE INDEX "scans_application_id_scan_type_created_at_id_idx" ON "scans"("application_id", "scan_type", "created_at" DESC, "id" DESC);
