// The items of a long JSON array that repeat an earlier one, as JSON Schema's `uniqueItems` means it
// (ajv's own equality, fast-deep-equal: objects equal whatever their keys' order), in one pass. Each
// item is hashed in place (members summed, so their order does not count) and compared only with the
// earlier items of its hash: writing every item out as canonical JSON instead made 30 MB of strings
// for a 10,000-statement VEX.
import ajvEqual from "ajv/dist/runtime/equal.js";

const equal = ajvEqual.default;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function textHash(text: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  return hash;
}

/** A hash that equal JSON values share. */
export function jsonHash(value: unknown): number {
  switch (typeof value) {
    case "string":
      return textHash(value);
    case "number":
      // 1 and 1.0 are one number; -0 and 0 are equal (-0 | 0 is 0).
      return Number.isInteger(value)
        ? Math.imul(value | 0, FNV_PRIME) ^ 0x5bd1e995
        : textHash(String(value)) ^ 0x27d4eb2d;
    case "boolean":
      return value ? 0x165667b1 : 0x3c6ef372;
    case "object": {
      if (value === null) return 0x1b873593;
      if (Array.isArray(value)) {
        let hash = 0x85ebca6b ^ value.length;
        for (const item of value) hash = Math.imul(hash ^ jsonHash(item), FNV_PRIME);
        return hash;
      }
      let sum = 0xc2b2ae35;
      for (const key in value) {
        if (Object.hasOwn(value, key))
          sum = (sum + Math.imul(textHash(key) ^ jsonHash((value as Record<string, unknown>)[key]), 0xcc9e2d51)) | 0;
      }
      return sum;
    }
    default:
      return 0;
  }
}

/** Each item equal to an earlier one, with the first of those. */
export function repeatedItems(items: readonly unknown[]): { index: number; first: number }[] {
  const firstsByHash = new Map<number, number[]>();
  const repeated: { index: number; first: number }[] = [];
  items.forEach((item, index) => {
    const hash = jsonHash(item);
    const firsts = firstsByHash.get(hash);
    const first = firsts?.find((earlier) => equal(items[earlier], item));
    if (first !== undefined) repeated.push({ index, first });
    else if (firsts) firsts.push(index);
    else firstsByHash.set(hash, [index]);
  });
  return repeated;
}
