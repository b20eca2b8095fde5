// Package URLs as VEX matching compares them (package-match.ts): normalised by packageurl-js,
// without qualifiers or subpath, the same answer however often and in whatever order they are asked.
import fc from "fast-check";
import { packageMatches, parsedKey, productKey } from "../../src/domain/vulnerabilities/package-match.ts";

it("keeps type, namespace, name and version as packageurl-js normalises them", () => {
  expect(productKey("pkg:NPM/Lodash@4.17.20?arch=x86#lib/sub")).toBe("pkg:npm/lodash@4.17.20");
  expect(productKey("pkg:pypi/Django_Rest@1.0")).toBe("pkg:pypi/django-rest@1.0");
  expect(productKey("pkg:npm/%40babel/core@7.0.0")).toBe("pkg:npm/%40babel/core@7.0.0");
  expect(productKey("pkg:maven/org.apache/commons")).toBe("pkg:maven/org.apache/commons");
});

it("answers null for a text that is not a package URL, every time it is asked", () => {
  for (let i = 0; i < 2; i++) {
    expect(productKey("pkg:npm/")).toBeNull();
    expect(productKey("src/app.js:12")).toBeNull();
    expect(productKey("CVE-2030-1")).toBeNull();
  }
});

it("matches a versionless product with every version of its package, and nothing else", () => {
  const key = productKey("pkg:npm/lodash@4.17.20");
  expect(packageMatches(key, ["pkg:npm/lodash"])).toBe(true);
  expect(packageMatches(key, ["pkg:npm/lodash@4.17.20"])).toBe(true);
  expect(packageMatches(key, ["pkg:npm/lodash@4.17.21", "pkg:npm/lodash-es"])).toBe(false);
  expect(packageMatches(null, ["pkg:npm/lodash"])).toBe(false);
});

it("answers as a fresh parse for any mix of texts, asked again and again, past the number it remembers", () => {
  const segment = fc.stringMatching(/^[A-Za-z0-9._%-]{0,8}$/);
  const purl = fc
    .tuple(
      fc.constantFrom("npm", "PyPI", "maven", "golang", "deb"),
      fc.option(segment),
      segment,
      fc.option(segment),
      fc.option(segment),
    )
    .map(
      ([type, namespace, name, version, qualifier]) =>
        `pkg:${type}/${namespace === null ? "" : `${namespace}/`}${name}${version === null ? "" : `@${version}`}${qualifier === null ? "" : `?q=${qualifier}`}`,
    );
  fc.assert(
    fc.property(
      fc.array(purl, { minLength: 1, maxLength: 40 }),
      fc.array(fc.nat(), { maxLength: 80 }),
      (texts, picks) => {
        for (const text of [...texts, ...picks.map((i) => texts[i % texts.length]!)])
          expect(productKey(text)).toBe(parsedKey(text));
      },
    ),
  );
  // More distinct texts than it remembers: the first ones are answered right once forgotten.
  const many = Array.from({ length: 60_000 }, (_, i) => `pkg:npm/package-${i}@1.0.${i % 7}`);
  for (const text of many) productKey(text);
  for (const text of [many[0]!, many[59_999]!, "pkg:NPM/Package-1@1.0.1"])
    expect(productKey(text)).toBe(parsedKey(text));
});
