// RFC 6901 JSON Pointers: how a report's errors name the place they are about.

/** `~` and `/` escaped inside each reference token; the empty path is the whole document (""). */
export const jsonPointer = (path: readonly PropertyKey[]): string =>
  path.map((key) => `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
