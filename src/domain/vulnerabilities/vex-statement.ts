// A VEX statement as the service applies it, whatever document format it came in (src/vex/).
import type { FieldError } from "../../errors.ts";
import type { Decision } from "./analysis.ts";
import type { ProductKey } from "./package-match.ts";

export const VEX_FORMATS = ["openvex", "cyclonedx"] as const;
export type VexFormat = (typeof VEX_FORMATS)[number];

export interface VexStatement {
  /** JSON Pointer of the statement in its document. */
  path: string;
  /** The vulnerability's name and aliases, canonical (vulnerability-ids.ts), the name first. */
  ids: string[];
  /** The packages it is about; null when it names none: then every finding with one of the ids. */
  products: ProductKey[] | null;
  decision: Decision;
  /** When it was made (ms since the epoch): of two statements about one vulnerability, the later wins. */
  madeAt: number;
}

/** A VEX document read: its statements, and those that are well-formed but cannot be applied. */
export interface VexReading {
  format: VexFormat;
  statements: VexStatement[];
  /** One per statement that cannot be applied, named by its JSON Pointer. */
  errors: FieldError[];
}
