// Structurally broken scanner reports (issue 60): a valid report of each format (SARIF, CycloneDX,
// Trivy, Grype, ZAP; test/helpers/scanner-reports.ts), mutated at one place of one level of its
// structure: the value there turned into another JSON type, or a required container taken away.
// Every one is invalid (places whose format takes any value, such as SARIF's property bags or the
// fields Trivy, Grype and ZAP readers do not read, are never mutated), so the service must refuse
// each with a 400 and change nothing: no scan, no finding resolved.
import fc from "fast-check";
import {
  REPORT_FORMAT_NAMES,
  replacedAt,
  validReport,
  valueAt,
  wrongTypeFor,
  type ReportFormatName,
} from "../scanner-reports.ts";

type Path = readonly (string | number)[];

export interface BrokenReport {
  format: ReportFormatName;
  /** Where it is broken, as a JSON Pointer-like path. */
  path: Path;
  how: "wrong type" | "removed";
  document: unknown;
}

/** Keys under which a format takes any value, or which its reader does not read: never mutated there. */
const FREE_FORM: Record<ReportFormatName, ReadonlySet<string>> = {
  sarif: new Set(["properties"]),
  cyclonedx: new Set(),
  trivy: new Set(["CreatedAt"]),
  grype: new Set(["dataSource", "distro", "target"]),
  zap: new Set([
    "@generated",
    "@host",
    "@port",
    "@ssl",
    "alertRef",
    "confidence",
    "riskdesc",
    "count",
    "reference",
    "wascid",
    "sourceid",
    "attack",
  ]),
};

/** Containers each format requires, whose removal makes the report invalid (not a failed or empty one). */
const REQUIRED: Record<ReportFormatName, readonly Path[]> = {
  sarif: [["runs"], ["runs", 0, "tool"], ["runs", 0, "tool", "driver"], ["runs", 0, "results", 0, "message"]],
  cyclonedx: [["specVersion"], ["bomFormat"]],
  trivy: [["SchemaVersion"], ["Results", 0, "Target"], ["Results", 0, "Vulnerabilities", 0, "VulnerabilityID"]],
  grype: [["matches"], ["matches", 0, "vulnerability"], ["matches", 0, "artifact"]],
  zap: [["site"], ["@version"], ["site", 0, "alerts"], ["site", 0, "@name"]],
};

/** Every place of the document, by depth (0: the document itself), outside its free-form parts. */
function placesByLevel(document: unknown, free: ReadonlySet<string>): Path[][] {
  const levels: Path[][] = [];
  const stack: Path[] = [[]];
  while (stack.length > 0) {
    const path = stack.pop()!;
    (levels[path.length] ??= []).push(path);
    const value = valueAt(document, path);
    if (Array.isArray(value)) value.forEach((_, i) => stack.push([...path, i]));
    else if (typeof value === "object" && value !== null) {
      for (const key of Object.keys(value)) if (!free.has(key)) stack.push([...path, key]);
    }
  }
  return levels;
}

function removedAt(document: unknown, path: Path): unknown {
  const copy = structuredClone(document) as any;
  const parent = valueAt(copy, path.slice(0, -1)) as any;
  delete parent[path.at(-1)!];
  return copy;
}

const findingNumbers = fc.uniqueArray(fc.integer({ min: 1001, max: 1004 }), { minLength: 1, maxLength: 3 });

/** A broken report of `format` (any format when absent), its level chosen first, then a place of it. */
export function brokenReport(format?: ReportFormatName): fc.Arbitrary<BrokenReport> {
  const formats = format ? fc.constant(format) : fc.constantFrom(...REPORT_FORMAT_NAMES);
  return fc
    .tuple(formats, findingNumbers, fc.nat(), fc.nat(), fc.nat({ max: 4 }))
    .map(([name, numbers, level, place, removal]): BrokenReport => {
      const valid = validReport(name, numbers);
      if (removal === 0) {
        const path = REQUIRED[name][place % REQUIRED[name].length]!;
        return { format: name, path, how: "removed", document: removedAt(valid, path) };
      }
      const levels = placesByLevel(valid, FREE_FORM[name]);
      const paths = levels[level % levels.length]!;
      const path = paths[place % paths.length]!;
      return {
        format: name,
        path,
        how: "wrong type",
        document: replacedAt(valid, path, wrongTypeFor(valueAt(valid, path))),
      };
    });
}

export const describeBroken = (report: BrokenReport): string =>
  `${report.format} report, ${report.how} at /${report.path.join("/")}`;
