-- Scans say where their findings came from (CONTRACT §11): the built-in engine or an uploaded
-- report, its format and the tool that wrote it. Vulnerabilities remember the tool that first
-- reported them, so a tool's scan resolves only that tool's findings. Everything recorded so far
-- came from the simulator.
CREATE TYPE "ScanSourceKind" AS ENUM ('engine', 'report');

ALTER TABLE "scans"
  ADD COLUMN "source_kind" "ScanSourceKind" NOT NULL DEFAULT 'engine',
  ADD COLUMN "source_format" TEXT,
  ADD COLUMN "source_tool" TEXT NOT NULL DEFAULT 'simulator',
  ADD COLUMN "source_tool_version" TEXT;

ALTER TABLE "vulnerabilities" ADD COLUMN "tool" TEXT NOT NULL DEFAULT 'simulator';
