// Where a scan's findings come from (docs/spec/CONTRACT.md §11's `source`) when a built-in engine runs it, and
// the columns that record it.
import type { ReportFormat } from "./scans.schemas.ts";

export interface EngineSource {
  kind: "engine";
  /** The report format the engine writes (the baseline engine: zap); null for the simulator. */
  format: ReportFormat | null;
  tool: string;
  toolVersion: string | null;
}

export const engineSourceColumns = (source: EngineSource) => ({
  sourceKind: source.kind,
  sourceFormat: source.format,
  sourceTool: source.tool,
  sourceToolVersion: source.toolVersion,
});
