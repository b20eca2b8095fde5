// Repeated items of a long array (JSON Schema's uniqueItems, checked in one pass): the same answer as
// comparing every item with every earlier one by ajv's own equality, and as ajv's uniqueItems.
import { Ajv2020 } from "ajv/dist/2020.js";
import ajvEqual from "ajv/dist/runtime/equal.js";
import fc from "fast-check";
import { jsonHash, repeatedItems } from "../../../src/scans/reports/repeated-items.ts";

const equal = ajvEqual.default;
const uniqueItems = new Ajv2020().compile({ type: "array", uniqueItems: true });

/** Every item equal to an earlier one, with the first of them: item by item against all before it. */
const pairwise = (items: readonly unknown[]) =>
  items.flatMap((item, index) => {
    const first = items.findIndex((earlier, j) => j < index && equal(earlier, item));
    return first === -1 ? [] : [{ index, first }];
  });

/** The same value with every object's members in reverse order. */
const reordered = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reordered);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reordered(v)]),
  );
};

// A small domain, so that equal items are frequent; objects as JSON.parse makes them (with a prototype).
const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom("a", "b", "", "ü"),
    fc.constantFrom(0, -0, 1, 2.5, -1, 2 ** 40),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("json"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("a", "b", "c"), tie("json"), { maxKeys: 3, noNullPrototype: true }),
  ),
}));
const items = fc
  .array(fc.tuple(json, fc.boolean()), { maxLength: 12 })
  .map((pairs) => pairs.map(([value, flip]) => (flip ? reordered(value) : value)));

it("finds every item equal to an earlier one, whatever its members' order, as ajv compares them", () => {
  fc.assert(
    fc.property(items, (array) => {
      const repeated = repeatedItems(array);
      expect(repeated).toEqual(pairwise(array));
      expect(repeated.length === 0).toBe(uniqueItems(array));
    }),
    { numRuns: 2_000 },
  );
});

it("hashes equal values alike", () => {
  fc.assert(
    fc.property(json, (value) => expect(jsonHash(reordered(value))).toBe(jsonHash(JSON.parse(JSON.stringify(value))))),
  );
  expect(jsonHash(-0)).toBe(jsonHash(0));
  expect(jsonHash(JSON.parse("1.0"))).toBe(jsonHash(1));
});

it("tells apart what is not equal", () => {
  expect(repeatedItems([[1, 2], [2, 1], { a: 1 }, { a: "1" }, { a: 1, b: null }, "1", 1, true, "true"])).toEqual([]);
  expect(repeatedItems([{ a: 1, b: [1, { c: 2, d: 3 }] }, "x", { b: [1, { d: 3, c: 2 }], a: 1 }, "x"])).toEqual([
    { index: 2, first: 0 },
    { index: 3, first: 1 },
  ]);
});

it("answers for 10,000 distinct items and their repeats in one pass", () => {
  const distinct = Array.from({ length: 10_000 }, (_, i) => ({
    vulnerability: { name: `CVE-2030-${i}` },
    status: "not_affected",
  }));
  expect(repeatedItems(distinct)).toEqual([]);
  expect(repeatedItems([...distinct, reordered(distinct[42]), distinct[7]])).toEqual([
    { index: 10_000, first: 42 },
    { index: 10_001, first: 7 },
  ]);
});
