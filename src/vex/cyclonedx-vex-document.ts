// CycloneDX 1.4–1.6 VEX (a BOM whose `vulnerabilities` carry `analysis`) → the statements the
// service applies. Checked against the schema of its specVersion first, as a report is.
import type { ProductKey } from "../domain/vulnerabilities/package-match.ts";
import { productKey } from "../domain/vulnerabilities/package-match.ts";
import type { VexReading, VexStatement } from "../domain/vulnerabilities/vex-statement.ts";
import { canonicalIds } from "../domain/vulnerabilities/vulnerability-ids.ts";
import { invalid, type FieldError } from "../errors.ts";
import {
  bomSchema,
  componentsByRef,
  CYCLONEDX_VERSIONS,
  decisionOfAnalysis,
  type Component,
  type CycloneDxAnalysis,
  type SpecVersion,
} from "../scans/reports/cyclonedx-report.ts";
import { jsonPointer } from "../scans/reports/json-pointer.ts";

interface Vulnerability {
  id?: string;
  references?: { id: string }[];
  analysis?: CycloneDxAnalysis & { firstIssued?: string; lastUpdated?: string };
  affects?: { ref: string }[];
  published?: string;
  updated?: string;
}

interface Bom {
  specVersion: SpecVersion;
  metadata?: { timestamp?: string; component?: Component };
  components?: Component[];
  vulnerabilities?: Vulnerability[];
}

export const isCycloneDx = (document: unknown): boolean =>
  typeof document === "object" &&
  document !== null &&
  (document as Record<string, unknown>)["bomFormat"] === "CycloneDX";

/** A BOM-Link (`urn:cdx:<serial>/<version>#<bom-ref>`) points into another BOM: its bom-ref is often the package URL. */
const BOM_LINK = /^urn:cdx:[^#]+#(.+)$/;

/**
 * The packages an `affects` ref names: a component of the document with a package URL, or a
 * package URL itself (also as a BOM-Link's bom-ref). "subject": the BOM's own subject, i.e. the
 * application as a whole.
 */
function affected(
  ref: string,
  components: Map<string, Component>,
  subject: string | undefined,
): ProductKey | "subject" | null {
  if (subject !== undefined && ref === subject) return "subject";
  const component = components.get(ref);
  if (component) return component.purl ? productKey(component.purl) : null;
  const linked = BOM_LINK.exec(ref)?.[1];
  return productKey(linked ? decodeURIComponent(linked) : ref);
}

export function readCycloneDxVex(document: unknown): VexReading {
  const version = (document as Record<string, unknown>)["specVersion"];
  if (!CYCLONEDX_VERSIONS.includes(version as SpecVersion)) {
    throw invalid("The document is not a CycloneDX BOM of a supported version", [
      { path: "/specVersion", message: `Must be one of ${CYCLONEDX_VERSIONS.join(", ")}` },
    ]);
  }
  const errors = bomSchema(version as SpecVersion)(document);
  if (errors.length > 0) throw invalid(`The document is not a valid CycloneDX ${String(version)} BOM`, errors);
  const bom = document as Bom;
  // A BOM without the list is an SBOM sent by mistake; an empty list is a VEX of no decisions (as
  // the export writes when nothing is decided).
  if (!bom.vulnerabilities) {
    throw invalid("The BOM holds no VEX", [
      { path: "/vulnerabilities", message: "A VEX lists vulnerabilities with their analysis" },
    ]);
  }
  const components = componentsByRef(bom);
  const subject = bom.metadata?.component?.["bom-ref"];
  const issued = Date.parse(bom.metadata?.timestamp ?? "");
  const statements: VexStatement[] = [];
  const inapplicable: FieldError[] = [];
  bom.vulnerabilities.forEach((vulnerability, i) => {
    const path = jsonPointer(["vulnerabilities", i]);
    const ids = canonicalIds([vulnerability.id, ...(vulnerability.references ?? []).map((r) => r.id)]);
    if (ids.length === 0) return inapplicable.push({ path: `${path}/id`, message: "Names no vulnerability" });
    const analysis = vulnerability.analysis;
    const state = analysis?.state;
    if (!analysis || !state)
      return inapplicable.push({ path: `${path}/analysis`, message: "Has no analysis.state: nothing to apply" });
    const refs = (vulnerability.affects ?? []).map((a) => affected(a.ref, components, subject));
    const products = [...new Set(refs.filter((r): r is ProductKey => r !== null && r !== "subject"))];
    if (refs.length > 0 && products.length === 0 && !refs.includes("subject")) {
      return inapplicable.push({
        path: `${path}/affects`,
        message:
          "Names no package by package URL: affected components are matched with the application's packages by package URL",
      });
    }
    const made = Date.parse(
      analysis.lastUpdated ?? analysis.firstIssued ?? vulnerability.updated ?? vulnerability.published ?? "",
    );
    statements.push({
      path,
      ids,
      // The BOM's subject is the application itself: every finding with the ids.
      products: refs.length === 0 || refs.includes("subject") ? null : products,
      decision: decisionOfAnalysis({ ...analysis, state }),
      madeAt: Number.isNaN(made) ? (Number.isNaN(issued) ? 0 : issued) : made,
    });
  });
  return { format: "cyclonedx", statements, errors: inapplicable };
}
