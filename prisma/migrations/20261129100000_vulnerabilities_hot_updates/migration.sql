-- A decision (a VEX, a kept statement meeting a new finding, a scan resolving or reopening) rewrites
-- a vulnerability's status, analysis and timestamps, and a re-scan its last scan. With an index on
-- status, each decision added an entry to every one of the table's five indexes; without it, none
-- of the columns these rewrite is indexed, so when the new version fits on the row's page the
-- rewrite is a HOT update, and half of each page is left free for that. A VEX changing 10,000
-- decisions took a quarter less time (bench/README.md). The counts by status and severity read the
-- rows (by the application's index) instead of that index. Pages written before this keep their
-- fill until rewritten.
DROP INDEX "vulnerabilities_application_id_status_severity_idx";
ALTER TABLE "vulnerabilities" SET (fillfactor = 50);
