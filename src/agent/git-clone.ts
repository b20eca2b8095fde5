// `{source}`: a shallow clone of the application's repository, by the machine's own git (so its
// configuration applies: credential helpers, `url.<base>.insteadOf` mirrors). Never prompts: a
// repository that wants credentials git does not have fails the clone instead of hanging it.
import { runInProcessGroup } from "./process-group.ts";

/** The URL as it may be shown: credentials in it (https://user:token@host/…) masked. */
function shown(repoUrl: string): { url: string; mask: (text: string) => string } {
  let url: URL;
  try {
    url = new URL(repoUrl);
  } catch {
    return { url: repoUrl, mask: (text) => text };
  }
  const secrets = [url.username, url.password]
    .filter((s) => s.length > 0)
    .map((s) => [s, decodeURIComponent(s)])
    .flat();
  if (secrets.length === 0) return { url: repoUrl, mask: (text) => text };
  url.username = url.username && "***";
  url.password = url.password && "***";
  return { url: url.href, mask: (text) => secrets.reduce((masked, secret) => masked.replaceAll(secret, "***"), text) };
}

export type CloneResult = { ok: true } | { ok: false; reason: string; aborted: boolean };

export async function shallowClone(
  repoUrl: string,
  into: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; signal: AbortSignal },
): Promise<CloneResult> {
  const run = await runInProcessGroup("git", ["clone", "--depth", "1", "--quiet", "--no-tags", "--", repoUrl, into], {
    cwd: options.cwd,
    env: { ...options.env, GIT_TERMINAL_PROMPT: "0" },
    timeoutMs: options.timeoutMs,
    signal: options.signal,
  });
  if (run.code === 0) return { ok: true };
  const why = run.spawnError
    ? `could not run git (${run.spawnError.message})`
    : run.timedOut
      ? `timed out after ${Math.round(options.timeoutMs / 1000)} s`
      : `git exited with code ${run.code ?? run.signal}`;
  const { url, mask } = shown(repoUrl);
  return {
    ok: false,
    aborted: run.aborted,
    reason: mask([`Cloning ${url} failed: ${why}`, run.stderrTail].filter(Boolean).join("\n")),
  };
}
