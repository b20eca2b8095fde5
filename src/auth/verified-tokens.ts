// Tokens verified recently, so a client sending the same bearer on every request pays for its
// signature check once a minute rather than on every request. Only successes are kept, never past
// the moment jose would refuse them (exp plus the clock skew), and never longer than `maxAgeMs`, so
// a key withdrawn from a JWKS stops working within that time. Bounded: the oldest entry goes first.
import type { Actor } from "./scopes.ts";

export interface VerifiedTokens {
  get(token: string): Actor | undefined;
  set(token: string, actor: Actor): void;
}

export function createVerifiedTokens(options: {
  maxEntries: number;
  maxAgeMs: number;
  skewSeconds: number;
  now?: () => number;
}): VerifiedTokens {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { actor: Actor; until: number }>();
  return {
    get(token) {
      const entry = entries.get(token);
      if (!entry) return undefined;
      if (now() < entry.until) return entry.actor;
      entries.delete(token);
      return undefined;
    },
    set(token, actor) {
      const until = Math.min((actor.exp + options.skewSeconds) * 1000, now() + options.maxAgeMs);
      entries.delete(token);
      entries.set(token, { actor, until });
      if (entries.size > options.maxEntries) entries.delete(entries.keys().next().value!);
    },
  };
}
