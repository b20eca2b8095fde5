// Event cursors: positions as 12 opaque characters; anything else is refused, never misread.
import fc from "fast-check";
import { decodeEventCursor, encodeEventCursor } from "../../src/events/event-log.ts";

/**
 * The cursor's bytes as docs/spec/CONTRACT.md §14's cursors were first written: a version byte, then the position as 8
 * bytes big-endian.
 */
const cursorBytes = (position: number) => {
  const bytes = Buffer.alloc(9);
  bytes[0] = 1;
  bytes.writeBigUInt64BE(BigInt(position), 1);
  return bytes;
};

it("round-trips every position, in 12 base64url characters: its nine bytes as base64url", () => {
  const position = fc.oneof(
    fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    fc.integer({ min: 0, max: 2 ** 24 }),
    fc.constantFrom(0, 1, 2 ** 24 - 1, 2 ** 32 - 1, 2 ** 32, 2 ** 48, Number.MAX_SAFE_INTEGER),
  );
  fc.assert(
    fc.property(position, (position) => {
      const cursor = encodeEventCursor(position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]{12}$/);
      expect(cursor).toBe(cursorBytes(position).toString("base64url"));
      expect(decodeEventCursor(cursor)).toBe(position);
    }),
    { numRuns: 1000 },
  );
});

it.each([[-1], [1.5], [2 ** 53], [Number.NaN]])("encodes no cursor for %p, which is no position", (position) => {
  expect(() => encodeEventCursor(position)).toThrow(RangeError);
});

it.each([
  ["empty", ""],
  ["too short", "AQAAAAAAAAA"],
  ["too long", "AQAAAAAAAAAAA"],
  ["padded", "AQAAAAAAAAA="],
  ["another version", Buffer.from([2, 0, 0, 0, 0, 0, 0, 0, 1]).toString("base64url")],
  ["beyond 2^53", Buffer.from([1, 0, 0x20, 0, 0, 0, 0, 0, 0]).toString("base64url")],
  ["base64, not base64url", "AQAAAAAAAA+/"],
  ["a list cursor", "WyIyMDI2LTExLTIxVDEwOjUwOjIwLjcxOFoiLCIwMWExZmRiYS04MGI1LTc2YTYtODU2Mi01MmExNGIxMGM5NWMiXQ"],
])("refuses %s", (_label, cursor) => {
  expect(decodeEventCursor(cursor)).toBeUndefined();
});
