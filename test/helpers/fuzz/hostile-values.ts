// The hostile values every generator draws from: strings that are not text, numbers no type holds,
// JSON nested past any limit, keys that pollute prototypes, ids and cursors that are almost right.
import fc from "fast-check";
import { JsonObject, RawJson, type JsonValue } from "./json-text.ts";

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));

/** One UTF-16 unit or code point from anywhere, lone surrogates and U+0000 included. */
const anyChar = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: loneSurrogate },
  {
    weight: 1,
    arbitrary: fc.constantFrom("\u0000", "\uFEFF", "\u202E", "\u2028", "\uFFFF", "\r", "\n", "%", "\\", '"'),
  },
);

export const NASTY_STRINGS = [
  "",
  " ",
  "\u0000",
  "x\u0000y",
  "\ud800",
  "\udfff",
  "a\udc00b",
  "\ud83d",
  "\udca5\ud83d",
  "💥",
  "\uFEFF{}",
  "\u202Egnp.exe",
  "../../etc/passwd",
  "..%2F..%2F",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "{{7*7}}",
  "${jndi:ldap://x/a}",
  "%00",
  "%ED%A0%80",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-0",
  "1e309",
  "0x1F",
  "true",
  "[object Object]",
  "\r\nX-Injected: 1",
  "\t",
  "a".repeat(201),
  "x".repeat(10_001),
  "é".normalize("NFD"),
  "ǅ",
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: anyChar, maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
);

/** Number literals as written on the wire: out of range, negative zero, past 2^53, exponents. */
export const NUMBER_LITERALS = [
  "1e309",
  "-1e309",
  "1e400",
  "1e-400",
  "-0",
  "0",
  "-1",
  "0.5",
  "2147483647",
  "2147483648",
  "-2147483649",
  "9007199254740993",
  "123456789012345678901234567890",
  "1" + "0".repeat(400),
  "5e2",
  "500.0",
  "1E3",
  "0.1e1",
];

export const hostileNumber: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.constantFrom(...NUMBER_LITERALS).map((text) => new RawJson(text)),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

export const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype", "__defineGetter__", "valueOf"];

const key = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS) },
  { weight: 1, arbitrary: hostileString },
);

/** `levels` arrays or objects inside each other, as text (cheap to build at any depth). */
export function nestedJson(levels: number, kind: "array" | "object"): RawJson {
  return kind === "array"
    ? new RawJson("[".repeat(levels) + "]".repeat(levels))
    : new RawJson('{"a":'.repeat(levels) + "1" + "}".repeat(levels));
}

export const deepJson: fc.Arbitrary<RawJson> = fc
  .tuple(
    fc.oneof(fc.constantFrom(63, 64, 65, 100), fc.integer({ min: 1, max: 20_000 })),
    fc.constantFrom("array" as const, "object" as const),
  )
  .map(([levels, kind]) => nestedJson(levels, kind));

/** Any JSON value, leaning hostile: nasty strings and keys, odd numbers, duplicated keys, deep nesting. */
export const hostileJson: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: fc.oneof(fc.constant(null), fc.boolean(), hostileString, hostileNumber) },
    { weight: 1, arbitrary: fc.array(tie("value"), { maxLength: 4 }) },
    {
      weight: 1,
      arbitrary: fc.array(fc.tuple(key, tie("value")), { maxLength: 4 }).map((entries) => new JsonObject(entries)),
    },
    { weight: 1, arbitrary: deepJson },
  ),
})).value;

export const UUID_LIKE = [
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "0190a8c6-0000-7000-8000-000000000000",
  "0190A8C6-0000-7000-8000-00000000000Z",
  "0190a8c6000070008000000000000000",
  "{0190a8c6-0000-7000-8000-000000000000}",
];

/** Ids that are not this service's: malformed, unknown, of another resource, absurdly long. */
export const hostileId: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...UUID_LIKE, "0", "-1", "1e309", "null", "x".repeat(3000)),
  fc.uuid(),
  hostileString,
);

const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");

/** Cursors a client could forge: not base64, base64 of not-JSON, JSON of the wrong shape or out of range. */
export function brokenCursor(validCursors: readonly string[]): fc.Arbitrary<string> {
  const aroundValid = validCursors.length
    ? [
        fc.constantFrom(...validCursors),
        fc.tuple(fc.constantFrom(...validCursors), fc.nat()).map(([c, n]) => c.slice(0, n % c.length)),
        fc
          .tuple(fc.constantFrom(...validCursors), fc.nat(), fc.constantFrom("A", "_", "-", "=", "+", "/", "%"))
          .map(([c, n, ch]) => {
            const at = n % c.length;
            return c.slice(0, at) + ch + c.slice(at + 1);
          }),
        fc.constantFrom(...validCursors).map((c) => Buffer.from(c, "base64url").toString("base64")),
      ]
    : [];
  return fc.oneof(
    fc.constantFrom("", "=", "====", "eyJ4Ijp9", "null", "%FF%FE", "\u0000", "x".repeat(4000)),
    fc.string({ maxLength: 40 }),
    fc
      .oneof(
        fc
          .constantFrom(
            ["+275760-09-13T00:00:00.000Z", UUID_LIKE[2]!],
            ["0000-01-01T00:00:00.000Z", UUID_LIKE[2]!],
            ["2024-02-30T00:00:00.000Z", UUID_LIKE[2]!],
            ["2024-01-01T00:00:00.000Z", "\ud800"],
            [1e308, 1],
            [],
            {},
          )
          .map((v) => JSON.stringify(v)),
        deepJson.map((raw) => raw.text),
        fc.tuple(hostileString, hostileString).map((pair) => JSON.stringify(pair)),
      )
      .map(base64url),
    ...aroundValid,
  );
}

/** Values for `limit`-like parameters: out of range, not integers, not numbers. */
export const hostileLimit: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    ...NUMBER_LITERALS,
    "NaN",
    "Infinity",
    "-Infinity",
    " 5",
    "5 ",
    "0x10",
    "0b1",
    "1_0",
    "",
    "500",
    "501",
    "1,2",
  ),
  fc.integer().map(String),
);
