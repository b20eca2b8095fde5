// Values a JSON Schema (the subset the API document uses) allows, as fast-check arbitraries, and
// values it forbids, one broken rule at a time: for sending the service what its document promises
// it takes, and what the document says it refuses.
import fc from "fast-check";

export type Schema = Record<string, any>;

export interface SchemaContext {
  /** Resolves `#/components/...` references. */
  doc: Schema;
  /** Arbitraries for properties the document describes in prose only (e.g. ids that must exist). */
  overrides?: Record<string, fc.Arbitrary<unknown>>;
}

export function resolve(schema: Schema, doc: Schema): Schema {
  if (typeof schema.$ref !== "string") return schema;
  const target = schema.$ref
    .replace(/^#\//, "")
    .split("/")
    .reduce((node: Schema, key: string) => node[key.replaceAll("~1", "/").replaceAll("~0", "~")], doc);
  return resolve(target, doc);
}

const STRING_CAP = 300; // long enough to reach most limits, short enough to run quickly

function stringArbitrary(s: Schema): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = s.maxLength ?? STRING_CAP;
  const within = (v: string) => [...v].length >= minLength && [...v].length <= maxLength;
  if (s.format === "uuid") return fc.uuid();
  if (s.format === "date-time") {
    // RFC 3339's four-digit years (toISOString writes others as ±YYYYYY).
    return fc
      .date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  if (s.format === "uri") {
    const pattern = s.pattern ? new RegExp(s.pattern) : undefined;
    const https = pattern?.test("https://example.com") && !pattern.test("http://example.com");
    return fc
      .webUrl({ validSchemes: https ? ["https"] : ["http", "https"], withQueryParameters: true, withFragments: true })
      .filter((v) => within(v) && (!pattern || pattern.test(v)));
  }
  if (s.pattern) {
    return fc
      .stringMatching(new RegExp(s.pattern))
      .map((v) => v.slice(0, maxLength))
      .filter((v) => within(v) && new RegExp(s.pattern).test(v));
  }
  return fc.string({ minLength, maxLength: Math.min(maxLength, STRING_CAP), unit: "grapheme" }).filter(within);
}

function numberArbitrary(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum : -1e6);
  const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum : 1e6);
  const arbitrary = integer
    ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return arbitrary.filter(
    (v) =>
      (s.exclusiveMinimum === undefined || v > s.exclusiveMinimum) &&
      (s.exclusiveMaximum === undefined || v < s.exclusiveMaximum),
  );
}

export function allowedBy(schema: Schema, ctx: SchemaContext, at = ""): fc.Arbitrary<unknown> {
  const override = ctx.overrides?.[at];
  if (override) return override;
  const s = resolve(schema, ctx.doc);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
  if (s.anyOf || s.oneOf) return fc.oneof(...(s.anyOf ?? s.oneOf).map((alt: Schema) => allowedBy(alt, ctx, at)));
  if (Array.isArray(s.type)) return fc.oneof(...s.type.map((type: string) => allowedBy({ ...s, type }, ctx, at)));
  switch (s.type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return numberArbitrary(s, true);
    case "number":
      return numberArbitrary(s, false);
    case "string":
      return stringArbitrary(s);
    case "array": {
      const items = allowedBy(s.items ?? {}, ctx, `${at}[]`);
      const bounds = { minLength: s.minItems ?? 0, maxLength: s.maxItems ?? 5 };
      return s.uniqueItems ? fc.uniqueArray(items, bounds) : fc.array(items, bounds);
    }
    case "object": {
      if (!s.properties && s.propertyNames?.enum) {
        const keys = s.propertyNames.enum as string[];
        const value = allowedBy(s.additionalProperties ?? {}, ctx, `${at}.*`);
        return fc.record(Object.fromEntries(keys.map((k) => [k, value])), { requiredKeys: [] });
      }
      const properties = (s.properties ?? {}) as Record<string, Schema>;
      return fc.record(
        Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, allowedBy(p, ctx, at ? `${at}.${k}` : k)])),
        { requiredKeys: (s.required ?? []) as string[] },
      );
    }
    default:
      return fc.jsonValue();
  }
}

/** An object the schema refuses, with the rule it breaks: each derived from `valid`, one rule broken. */
export function forbiddenBy(schema: Schema, valid: Record<string, unknown>, doc: Schema): [string, unknown][] {
  const s = resolve(schema, doc);
  const out: [string, unknown][] = [];
  if (s.additionalProperties === false) out.push(["an unknown property", { ...valid, notInTheDocument: 1 }]);
  for (const key of (s.required ?? []) as string[]) {
    const { [key]: _dropped, ...rest } = valid;
    out.push([`no ${key}`, rest]);
  }
  for (const [key, raw] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
    if (raw.readOnly) continue;
    const p = resolve(raw, doc);
    const alternatives = ((p.anyOf ?? [p]) as Schema[]).map((alt) => resolve(alt, doc));
    const types = new Set(alternatives.flatMap((alt) => alt.type ?? []));
    const only = alternatives.filter((alt) => alt.type !== "null");
    if (!types.has("number") && !types.has("integer")) out.push([`${key} a number`, { ...valid, [key]: 12345 }]);
    if (!types.has("null")) out.push([`${key} null`, { ...valid, [key]: null }]);
    if (only.length !== 1) continue;
    const [q] = only as [Schema];
    if (q.type === "string" && q.maxLength !== undefined) {
      out.push([`${key} over ${q.maxLength} characters`, { ...valid, [key]: "x".repeat(q.maxLength + 1) }]);
    }
    if (q.type === "string" && q.enum) out.push([`${key} outside its enum`, { ...valid, [key]: "not-a-listed-value" }]);
    if (q.type === "string" && q.pattern) {
      const breaking = ["   ", "ftp://example.com/x", "http://example.com/x", "https://user:pw@example.com/"].find(
        (v) => !new RegExp(q.pattern).test(v),
      );
      if (breaking) out.push([`${key} not matching ${q.pattern}`, { ...valid, [key]: breaking }]);
    }
    if (q.type === "array" && q.maxItems !== undefined) {
      const many = Array.from({ length: q.maxItems + 1 }, (_, i) => `item-${i}`);
      out.push([`${key} with ${q.maxItems + 1} items`, { ...valid, [key]: many }]);
    }
    if (q.type === "array" && q.minItems) out.push([`${key} with no items`, { ...valid, [key]: [] }]);
    if (q.type === "number" && q.maximum !== undefined)
      out.push([`${key} over ${q.maximum}`, { ...valid, [key]: q.maximum + 1 }]);
  }
  return out;
}
