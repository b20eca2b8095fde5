// `npm ci`'s last step (npm runs a project's `prepare` after each install of it): apply the
// patches to dependencies, generate the Prisma client, build dist/. A production install
// (`npm ci --omit=dev`, as the Dockerfile's runtime stage does) lacks the dev dependencies and runs the
// dist/ built before it, so there it only applies the patches.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

const installed = (name) => existsSync(`node_modules/${name}/package.json`);
const run = (command, ...args) => execFileSync(command, args, { stdio: "inherit" });

if (existsSync("patches") && readdirSync("patches").some((f) => f.endsWith(".patch"))) {
  run("npx", "--no-install", "patch-package", "--error-on-fail", "--error-on-warn");
}
// Some dev dependencies are also optional peers of runtime ones (typescript and prisma of
// @prisma/client), and npm installs those anyway: only all of them mean a development install.
const { devDependencies } = JSON.parse(readFileSync("package.json", "utf8"));
if (Object.keys(devDependencies).every(installed)) {
  run("npx", "--no-install", "prisma", "generate");
  run("npm", "run", "--silent", "build");
} else {
  console.log("prepare: a production install (no dev dependencies): dist/ is used as it was built");
}
