// `npm ci`'s last step (npm runs a project's `prepare` after each install of it): apply the
// patches to dependencies, generate the Prisma client, build dist/. A production install
// (`npm ci --omit=dev`, as the Dockerfile's runtime stage does) has no compiler and runs the dist/
// built before it, so there it only applies the patches.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const installed = (name) => {
  try {
    require.resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
};
const run = (command, ...args) => execFileSync(command, args, { stdio: "inherit" });

if (existsSync("patches") && readdirSync("patches").some((f) => f.endsWith(".patch"))) {
  run("npx", "--no-install", "patch-package", "--error-on-fail", "--error-on-warn");
}
if (installed("typescript")) {
  run("npx", "--no-install", "prisma", "generate");
  run("npm", "run", "--silent", "build");
} else {
  console.log("prepare: a production install (no dev dependencies): dist/ is used as it was built");
}
