// docs/spec/ holds a copy of the API's specification (SPEC.md, CONTRACT.md), so that a clone carries
// it and code comments can cite it (docs/spec/CONTRACT.md §12). The original lives beside the repository, in the
// project's workspace (../shared/spec/); where it exists, the copy must be the same, byte for byte,
// file for file. A clone anywhere else has no original to compare with.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url));
const copy = fileURLToPath(new URL("../../docs/spec/", import.meta.url));
const original = fileURLToPath(new URL("../../../shared/spec/", import.meta.url));

const markdownIn = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith(".md"))
    .sort();

if (!existsSync(original)) {
  const reason = `no original at ${original} beside ${repositoryRoot} (a clone outside the project's workspace): nothing to compare docs/spec/ with`;
  console.warn(`spec-copy.test.ts skipped: ${reason}`);
  it.skip(`docs/spec/ is the workspace's original (skipped: ${reason})`, () => {});
} else {
  describe(`docs/spec/ against ${original}`, () => {
    it("holds the same files", () => {
      expect(markdownIn(copy)).toEqual(markdownIn(original));
    });

    it.each(markdownIn(original))("%s is the original, byte for byte", (name) => {
      const copied = readFileSync(copy + name);
      const source = readFileSync(original + name);
      // Compared as text first, so that a difference is reported as the lines that differ.
      if (!copied.equals(source)) expect(copied.toString("utf8")).toEqual(source.toString("utf8"));
      expect(copied.equals(source)).toBe(true);
    });
  });
}
