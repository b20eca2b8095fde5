// Matching a VEX statement's products against a vulnerability's package by package URL
// (docs/spec/CONTRACT.md §13): type, namespace, name and version as packageurl-js normalises them, qualifiers
// and subpath left out; a product without a version names every version of the package.
import { PackageURL } from "packageurl-js";

/** A package URL without qualifiers and subpath, e.g. `pkg:npm/lodash@4.17.20` or `pkg:npm/lodash`. */
export type ProductKey = string;

/**
 * Keys already worked out, by text. Parsing a package URL takes microseconds, and an apply meets
 * each one at least twice (a statement's product, the vulnerability's location), often again in the
 * next document. Emptied when full, so a thread's memory stays bounded.
 */
const known = new Map<string, ProductKey | null>();
const KNOWN_AT_MOST = 50_000;

/** The package URL without qualifiers or subpath; null when the text is not a package URL. */
export function productKey(text: string): ProductKey | null {
  if (!text.startsWith("pkg:")) return null;
  let key = known.get(text);
  if (key === undefined) {
    key = parsedKey(text);
    if (known.size >= KNOWN_AT_MOST) known.clear();
    known.set(text, key);
  }
  return key;
}

/** productKey worked out afresh, remembering nothing. */
export function parsedKey(text: string): ProductKey | null {
  try {
    const purl = PackageURL.fromString(text);
    return new PackageURL(purl.type, purl.namespace, purl.name, purl.version, undefined, undefined).toString();
  } catch {
    return null;
  }
}

/** The key without its version: what a versionless product is compared with. */
export const versionless = (key: ProductKey): ProductKey => {
  const at = key.lastIndexOf("@");
  // A namespace's `@` is percent-encoded (pkg:npm/%40babel/core), so an `@` is the version's.
  return at === -1 ? key : key.slice(0, at);
};

/** Whether a vulnerability's package (its key) is one of the products. */
export function packageMatches(packageKey: ProductKey | null, products: readonly ProductKey[]): boolean {
  if (packageKey === null) return false;
  const base = versionless(packageKey);
  return products.some((product) => product === packageKey || product === base);
}
