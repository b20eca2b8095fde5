// The package a dependency finding is about, as sca and container reports name it: a package URL
// (https://github.com/package-url/purl-spec) when they give one, else a name and a version.
import { PackageURL } from "packageurl-js";
import { packageCoordinate } from "./finding-rules.ts";

export interface PackageRef {
  name: string;
  version: string | null;
  purl: string | null;
}

/** Package types whose namespace is the distribution (`pkg:deb/debian/openssl`), not part of the name. */
const DISTRIBUTION_NAMESPACED = new Set(["alpm", "apk", "deb", "qpkg", "rpm"]);

/** The package's name as its ecosystem writes it: `@babel/core`, `org.apache:log4j-core`, `lodash`, `openssl`. */
function nameOf(purl: PackageURL): string {
  if (!purl.namespace || DISTRIBUTION_NAMESPACED.has(purl.type)) return purl.name;
  return purl.type === "maven" ? `${purl.namespace}:${purl.name}` : `${purl.namespace}/${purl.name}`;
}

/** A PackageRef from a package URL; null when the text is not one. */
export function fromPurl(text: string): PackageRef | null {
  try {
    const purl = PackageURL.fromString(text);
    return { name: nameOf(purl), version: purl.version ?? null, purl: text };
  } catch {
    return null;
  }
}

/** How a finding's location names its package: the package URL, else `name@version`. */
export const packageLocation = (ref: PackageRef): string => ref.purl ?? packageCoordinate(ref.name, ref.version);
