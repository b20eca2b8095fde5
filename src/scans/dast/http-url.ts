// URLs as pages write them (relative, padded, of any scheme) made absolute for the crawl and the rules.

/** `value` resolved against `base` when it is an http(s) URL, without its fragment; null for anything else. */
export function httpUrlOf(value: string, base: URL): URL | null {
  const trimmed = value.trim();
  if (trimmed === "") return null;
  try {
    const url = new URL(trimmed, base);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    url.hash = "";
    return url;
  } catch {
    return null;
  }
}
