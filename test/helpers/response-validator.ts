// Every answer the tests get through TestApp.request is checked against the service's own
// /openapi.json: its status must be one the operation declares, and a JSON body must match the
// declared schema. So a new route, or a changed answer, is covered without anyone adding a test.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { pathPattern } from "../../src/http/route.ts";

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

/** An answer that breaks the document, with what the tests asked. */
export class ResponseBreaksDocument extends Error {
  override name = "ResponseBreaksDocument";
}

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

/** `document`: an OpenAPI 3.1 document, as buildOpenApi makes it. */
export function responseValidator(document: object) {
  const doc = document as Document;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: "openapi.json" });
  const compiled = new Map<string, ValidateFunction>();
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: pathPattern(template),
  }));

  return function check(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
    const path = new URL(url, "http://service").pathname;
    const template = templates.find((t) => t.pattern.test(path))?.template;
    const operation = template && doc.paths[template]![method.toLowerCase()];
    // Not an operation of the document (GraphQL, the console, an unknown path or method): the
    // document has nothing to say, beyond what those doors' own tests check.
    if (!operation) return;
    const declared = operation.responses[String(status)] ?? operation.responses.default;
    const where = `${method} ${path} answered ${status}`;
    if (!declared) {
      throw new ResponseBreaksDocument(
        `${where}, which ${template} does not declare (${Object.keys(operation.responses).join(", ")})`,
      );
    }
    const mediaType = contentType?.split(";")[0]?.trim();
    if (!declared.content || !mediaType || !/json$/.test(mediaType)) return;
    // A declared type may carry parameters (`; version=1.6`): the answer's type is compared without.
    const key = Object.keys(declared.content).find((type) => type.split(";")[0]!.trim() === mediaType);
    if (!key) {
      throw new ResponseBreaksDocument(`${where} with ${mediaType}, not ${Object.keys(declared.content).join(", ")}`);
    }
    const ref = `openapi.json#/${pointer("paths", template, method.toLowerCase(), "responses", declared === operation.responses.default ? "default" : String(status), "content", key, "schema")}`;
    let validate = compiled.get(ref);
    if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: ref })));
    if (!validate(body)) {
      throw new ResponseBreaksDocument(
        `${where} with a body its schema refuses: ${ajv.errorsText(validate.errors, { separator: "; " })}\n${JSON.stringify(body).slice(0, 500)}`,
      );
    }
  };
}
