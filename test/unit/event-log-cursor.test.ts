// Event cursors: positions as 12 opaque characters; anything else is refused, never misread.
import fc from "fast-check";
import { decodeEventCursor, encodeEventCursor } from "../../src/events/event-log.ts";

it("round-trips every position, in 12 base64url characters", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (position) => {
      const cursor = encodeEventCursor(position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]{12}$/);
      expect(decodeEventCursor(cursor)).toBe(position);
    }),
  );
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
