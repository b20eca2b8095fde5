// From a parsed JSON document to its VEX statements: the format the caller named, or the one the
// document shows (OpenVEX's @context, CycloneDX's bomFormat).
import { unsafeInput } from "../domain/validation.ts";
import { VEX_FORMATS, type VexFormat, type VexReading } from "../domain/vulnerabilities/vex-statement.ts";
import { invalid } from "../errors.ts";
import { jsonPointer } from "../scans/reports/json-pointer.ts";
import { isCycloneDx, readCycloneDxVex } from "./cyclonedx-vex-document.ts";
import { isOpenVex, readOpenVex } from "./openvex-document.ts";

const READERS: Record<VexFormat, { detect(document: unknown): boolean; read(document: unknown): VexReading }> = {
  openvex: { detect: isOpenVex, read: readOpenVex },
  cyclonedx: { detect: isCycloneDx, read: readCycloneDxVex },
};

/** `format`: the caller's `?format=`, if any. Throws a validation DomainError naming JSON Pointers. */
export function readVexDocument(document: unknown, format?: string): VexReading {
  if (format !== undefined && !(VEX_FORMATS as readonly string[]).includes(format)) {
    throw invalid("Unknown VEX format", [{ path: "format", message: `Must be one of ${VEX_FORMATS.join(", ")}` }]);
  }
  // What JSON.parse accepts but no field may hold (nesting deeper than 64 levels, a lone
  // surrogate, U+0000) is refused with its JSON Pointer before the schema's checks walk it.
  const unsafe = unsafeInput(document, jsonPointer);
  if (unsafe) throw invalid("The document is invalid", [unsafe]);
  const reader = format ? READERS[format as VexFormat] : Object.values(READERS).find((r) => r.detect(document));
  if (!reader || typeof document !== "object" || document === null || Array.isArray(document)) {
    throw invalid("The document is not a VEX document", [
      {
        path: "",
        message: `Not OpenVEX 0.2.0 nor a CycloneDX 1.4–1.6 BOM with vulnerabilities; name its format with ?format= (${VEX_FORMATS.join(", ")}) if it is one`,
      },
    ]);
  }
  return reader.read(document);
}
