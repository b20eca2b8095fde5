// What no field may hold (validation.ts's unsafeInput): the first such thing in the document's order,
// named by its full path, with the depth counted from where the value sits.
import { MAX_INPUT_DEPTH, unsafeInput } from "../../src/domain/validation.ts";
import { jsonPointer } from "../../src/scans/reports/json-pointer.ts";

const nested = (depth: number, inner: unknown): unknown =>
  depth === 0 ? inner : depth % 2 ? [nested(depth - 1, inner)] : { level: nested(depth - 1, inner) };

it("names the place of a string with U+0000 or a lone surrogate, in arrays and objects", () => {
  expect(unsafeInput({ a: [1, { b: ["ok", "x\u0000"] }] }, jsonPointer)).toEqual({
    path: "/a/1/b/1",
    message: "Must not contain U+0000",
  });
  expect(unsafeInput({ a: [1, { b: ["ok", "x\u0000"] }] })).toEqual({
    path: "a[1].b[1]",
    message: "Must not contain U+0000",
  });
  expect(unsafeInput(["\ud800"], jsonPointer)).toEqual({
    path: "/0",
    message: "Must be valid Unicode text (it holds a lone UTF-16 surrogate)",
  });
  expect(unsafeInput("\u0000", jsonPointer, ["runs", 2])).toEqual({
    path: "/runs/2",
    message: "Must not contain U+0000",
  });
  expect(unsafeInput({ ok: ["\ud83d\ude00", null, true, 1.5] })).toBeNull();
});

it("names a key that cannot be stored, with the object it is in", () => {
  expect(unsafeInput({ a: { "b\u0000": 1 } }, jsonPointer)).toEqual({
    path: "/a/b\u0000",
    message: "Must not contain U+0000",
  });
});

it("answers the first problem in the document's order", () => {
  expect(unsafeInput({ a: { deep: ["\u0000"] }, b: "\u0000" }, jsonPointer)?.path).toBe("/a/deep/0");
  expect(unsafeInput([["ok"], ["ok", "\ud800"], "\u0000"], jsonPointer)?.path).toBe("/1/1");
});

it("refuses nesting deeper than the limit, counted from where the value sits", () => {
  expect(unsafeInput(nested(MAX_INPUT_DEPTH - 1, "ok"))).toBeNull();
  const tooDeep = unsafeInput(nested(MAX_INPUT_DEPTH + 5, "ok"), jsonPointer);
  expect(tooDeep?.message).toBe(`Must not be nested deeper than ${MAX_INPUT_DEPTH} levels`);
  expect(tooDeep?.path.split("/").length).toBe(MAX_INPUT_DEPTH + 1);
  const deepInARun = nested(MAX_INPUT_DEPTH - 2, "ok");
  expect(unsafeInput(deepInARun)).toBeNull();
  expect(unsafeInput(deepInARun, jsonPointer, ["runs", 0, "results"])?.path).toMatch(
    /^\/runs\/0\/results\/level\/0\/level\//,
  );
});
