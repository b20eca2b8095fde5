// JSON as text the fuzzer controls to the byte: literals JSON.stringify would never write (1e400,
// 123456789012345678901234567890), `__proto__` and duplicated keys, and lone UTF-16 surrogates
// either as `\udXXX` escapes or as their raw (WTF-8) bytes, which no valid UTF-8 holds.

/** A fragment written as-is: a number literal out of range, a prebuilt deep nesting. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** An object as ordered entries, so keys may repeat and `__proto__` stays an ordinary key. */
export class JsonObject {
  constructor(readonly entries: readonly (readonly [string, JsonValue])[]) {}
}

export type JsonValue = null | boolean | number | string | RawJson | JsonObject | readonly JsonValue[];

export type SurrogateForm = "escaped" | "raw-bytes";

function quote(s: string, form: SurrogateForm): string {
  if (form === "escaped") return JSON.stringify(s); // escapes lone surrogates as \udXXX
  // Only what JSON requires; lone surrogates stay, to be written as raw bytes by wtf8().
  return `"${s.replace(/["\\\u0000-\u001f]/g, (c) => (c === '"' || c === "\\" ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`))}"`;
}

export function jsonText(value: JsonValue, form: SurrogateForm = "escaped"): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof JsonObject)
    return `{${value.entries.map(([k, v]) => `${quote(k, form)}:${jsonText(v, form)}`).join(",")}}`;
  if (Array.isArray(value)) return `[${value.map((v) => jsonText(v, form)).join(",")}]`;
  if (typeof value === "string") return quote(value, form);
  return JSON.stringify(value) ?? "null";
}

/**
 * UTF-8, except that a lone surrogate becomes its own three bytes (ED A0 80 for U+D800) instead of
 * U+FFFD's: the bytes a careless encoder sends.
 */
export function wtf8(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      bytes.push(...Buffer.from(text.slice(i, i + 2), "utf8"));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      bytes.push(0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f));
    } else {
      bytes.push(...Buffer.from(text[i]!, "utf8"));
    }
  }
  return Buffer.from(bytes);
}

/** Percent-encodes every byte outside the unreserved set, lone surrogates as their WTF-8 bytes. */
export function percentEncode(text: string): string {
  return [...wtf8(text)]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
}
