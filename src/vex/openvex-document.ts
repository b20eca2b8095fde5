// OpenVEX 0.2.0 (https://github.com/openvex/spec) → the statements the service applies. The
// document is checked against the published JSON Schema (src/schemas/openvex-0.2.0.json) before
// it is read.
import type { Decision } from "../domain/vulnerabilities/analysis.ts";
import { productKey, type ProductKey } from "../domain/vulnerabilities/package-match.ts";
import type { VexReading, VexStatement } from "../domain/vulnerabilities/vex-statement.ts";
import { canonicalIds } from "../domain/vulnerabilities/vulnerability-ids.ts";
import { invalid, type FieldError } from "../errors.ts";
import { jsonPointer } from "../scans/reports/json-pointer.ts";
import { schemaCheckOfLongArrays, type SchemaCheck } from "../scans/reports/json-schema-check.ts";
import { vendoredSchema } from "../schemas/vendored-schema.ts";

export const OPENVEX_CONTEXT = "https://openvex.dev/ns/v0.2.0";

let check: SchemaCheck | undefined;
const openVexSchema = (): SchemaCheck =>
  (check ??= schemaCheckOfLongArrays(vendoredSchema("openvex-0.2.0.json"), ["statements"], {
    draft2020: true,
  }));

export const OPENVEX_STATUSES = ["not_affected", "affected", "fixed", "under_investigation"] as const;
export type OpenVexStatus = (typeof OPENVEX_STATUSES)[number];

/** OpenVEX's statuses in CycloneDX's analysis.state (docs/spec/CONTRACT.md §13). */
export const STATE_OF_STATUS = {
  not_affected: "not_affected",
  under_investigation: "in_triage",
  affected: "exploitable",
  fixed: "resolved",
} as const satisfies Record<OpenVexStatus, Decision["state"]>;

interface Component {
  "@id"?: string;
  identifiers?: { purl?: string };
}

interface Statement {
  vulnerability: { name: string; aliases?: string[] };
  products?: (Component & { subcomponents?: Component[] })[];
  status: OpenVexStatus;
  justification?: Decision["justification"];
  impact_statement?: string;
  action_statement?: string;
  status_notes?: string;
  timestamp?: string;
  last_updated?: string;
}

interface Document {
  timestamp: string;
  last_updated?: string;
  statements: Statement[];
}

export const isOpenVex = (document: unknown): boolean =>
  typeof document === "object" &&
  document !== null &&
  String((document as Record<string, unknown>)["@context"] ?? "").startsWith("https://openvex.dev/ns");

/** The package URLs a component names: its @id when that is one, and its identifiers' purl. */
const purlsOf = (component: Component): ProductKey[] =>
  [component["@id"], component.identifiers?.purl].flatMap((text) => (text ? (productKey(text) ?? []) : []));

/** What the statement says, its texts in `detail`: why not affected, what to do, how it was determined. */
function decisionOf(statement: Statement): Decision {
  const texts = [statement.impact_statement, statement.action_statement, statement.status_notes].filter(
    (t): t is string => !!t?.trim(),
  );
  return {
    state: STATE_OF_STATUS[statement.status],
    justification: statement.justification ?? null,
    detail: texts.length > 0 ? texts.join("\n\n") : null,
    response: [],
  };
}

export function readOpenVex(document: unknown): VexReading {
  const context = (document as Record<string, unknown>)["@context"];
  if (context !== OPENVEX_CONTEXT) {
    throw invalid("Only OpenVEX 0.2.0 is read", [{ path: "/@context", message: `Must be ${OPENVEX_CONTEXT}` }]);
  }
  const errors = openVexSchema()(document);
  if (errors.length > 0) throw invalid("The document is not a valid OpenVEX 0.2.0 document", errors);
  const doc = document as Document;
  const issued = Date.parse(doc.last_updated ?? doc.timestamp);
  const statements: VexStatement[] = [];
  const inapplicable: FieldError[] = [];
  doc.statements.forEach((statement, i) => {
    const path = jsonPointer(["statements", i]);
    const ids = canonicalIds([statement.vulnerability.name, ...(statement.vulnerability.aliases ?? [])]);
    if (ids.length === 0)
      return inapplicable.push({ path: `${path}/vulnerability/name`, message: "Names no vulnerability" });
    const named = statement.products ?? [];
    const products = [...new Set(named.flatMap((p) => [...purlsOf(p), ...(p.subcomponents ?? []).flatMap(purlsOf)]))];
    if (named.length > 0 && products.length === 0) {
      return inapplicable.push({
        path: `${path}/products`,
        message: "Names no product by package URL: products are matched with the application's packages by package URL",
      });
    }
    const made = Date.parse(statement.last_updated ?? statement.timestamp ?? "");
    statements.push({
      path,
      ids,
      products: named.length > 0 ? products : null,
      decision: decisionOf(statement),
      madeAt: Number.isNaN(made) ? issued : made,
    });
  });
  return { format: "openvex", statements, errors: inapplicable };
}
