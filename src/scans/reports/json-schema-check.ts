// Checks a report against its format's published JSON Schema, with ajv. The errors name JSON
// Pointers into the report (ajv's instancePath is one), at most a handful so a badly broken report
// gets a readable answer.
import { Ajv, type AnySchema, type ErrorObject, type Options } from "ajv";
import AjvDraft04 from "ajv-draft-04";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { fullFormats } from "ajv-formats/dist/formats.js";
import type { FieldError } from "../../errors.ts";
import { jsonPointer } from "./json-pointer.ts";
import { repeatedItems } from "./repeated-items.ts";

export const MAX_ERRORS = 20;

export type SchemaCheck = (document: unknown) => FieldError[];

/**
 * `uri` and `uri-reference` as IRIs (RFC 3987): tools write paths such as `src/ünï.ts` unencoded,
 * which RFC 3986 forbids but every reader understands. Non-ASCII is percent-encoded, then checked.
 */
function asIri(format: (typeof fullFormats)["uri"] | (typeof fullFormats)["uri-reference"]) {
  const check = (s: string) =>
    format instanceof RegExp ? format.test(s) : typeof format === "function" ? format(s) : false;
  return (value: string) => check(value.replace(/[^\x00-\x7f]+/g, (text) => encodeURIComponent(text)));
}

function describe(error: ErrorObject): FieldError {
  const path = error.instancePath;
  if (error.keyword === "additionalProperties")
    return { path: path + jsonPointer([error.params.additionalProperty]), message: "Unknown property" };
  if (error.keyword === "required")
    return { path: path + jsonPointer([error.params.missingProperty]), message: "Required" };
  return { path, message: error.message ?? "Invalid" };
}

/**
 * Compiles `schema` once (draft-04 schemas with ajv-draft-04, 2020-12 ones with Ajv2020, draft-07
 * with ajv), with the schemas it refers to by `$ref` added first.
 */
export function schemaCheck(
  schema: AnySchema,
  options: { draft04?: boolean; draft2020?: boolean; references?: AnySchema[] } = {},
): SchemaCheck {
  // unicodeRegExp off: the published SARIF schema has a pattern that is invalid under the u flag.
  const ajvOptions: Options = {
    allErrors: true,
    strict: false,
    validateFormats: true,
    unicodeRegExp: false,
    logger: false,
  };
  const ajv = options.draft04
    ? new AjvDraft04(ajvOptions)
    : options.draft2020
      ? new Ajv2020(ajvOptions)
      : new Ajv(ajvOptions);
  addFormats.default(ajv as unknown as Ajv);
  ajv.addFormat("uri", asIri(fullFormats.uri));
  ajv.addFormat("uri-reference", asIri(fullFormats["uri-reference"]));
  // OpenVEX's identifiers are IRIs; ajv-formats has no such format.
  ajv.addFormat("iri", asIri(fullFormats.uri));
  for (const reference of options.references ?? []) ajv.addSchema(reference);
  const validate = ajv.compile(schema);
  return (document) => {
    if (validate(document)) return [];
    const errors = (validate.errors ?? []).map(describe);
    const unique = [...new Map(errors.map((e) => [`${e.path}\0${e.message}`, e])).values()];
    return unique.slice(0, MAX_ERRORS);
  };
}

/**
 * schemaCheck for documents with long arrays of `uniqueItems` (a VEX's 10,000 statements, a BOM's
 * components and vulnerabilities): ajv compares every item with every other (10,000 items took
 * 8 to 16 s). Those arrays' uniqueness is checked here instead, in one pass (repeated-items.ts,
 * ajv's own equality); everything else as the schema says.
 */
export function schemaCheckOfLongArrays(
  schema: Record<string, unknown>,
  longArrays: readonly string[],
  options: Parameters<typeof schemaCheck>[1] = {},
): SchemaCheck {
  const relaxed = structuredClone(schema) as { properties: Record<string, { uniqueItems?: boolean }> };
  for (const name of longArrays) delete relaxed.properties[name]!.uniqueItems;
  const check = schemaCheck(relaxed, options);
  return (document) => {
    const errors = check(document);
    for (const name of longArrays) {
      const items =
        typeof document === "object" && document !== null ? (document as Record<string, unknown>)[name] : undefined;
      if (!Array.isArray(items)) continue;
      for (const { index, first } of repeatedItems(items)) {
        errors.push({ path: jsonPointer([name, index]), message: `Repeats item ${first}: the items must be unique` });
      }
    }
    return errors.slice(0, MAX_ERRORS);
  };
}
