// The project's own lint (`npm run lint`, with dpdm refusing import cycles): typescript-eslint's
// recommended rules, and type-only imports marked as such.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "src/generated/", "console/src/graphql-env.d.ts", "test/fixtures/", "coverage/", ".data/"] },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-import-type-side-effects": "error",
      // A closure may read what is assigned after it is made (a subscriber joined later).
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests and benchmarks read JSON answers whose shape the assertions check.
    files: ["test/**", "bench/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
