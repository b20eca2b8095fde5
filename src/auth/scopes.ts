import { DomainError, forbidden } from "../errors.ts";
import type { TeamAccess } from "./teams.ts";

export const SCOPES = [
  "applications:read",
  "applications:write",
  "scans:read",
  "scans:write",
  /** Scan agents: claim, heartbeat and fail external scans (docs/spec/CONTRACT.md §12). */
  "scans:run",
  "vulnerabilities:read",
  /** Record decisions about vulnerabilities as VEX documents (docs/spec/CONTRACT.md §13). */
  "vulnerabilities:triage",
  "policies:read",
  "policies:write",
  "webhooks:read",
  "webhooks:write",
] as const;
export type Scope = (typeof SCOPES)[number];
export const ADMIN_SCOPE = "admin";

/** What each scope lets a token do, as the API document tells clients and gateways. */
export const SCOPE_DESCRIPTIONS: Record<Scope | typeof ADMIN_SCOPE, string> = {
  "applications:read": "Read applications",
  "applications:write": "Create, change and delete applications",
  "scans:read": "Read scans",
  "scans:write": "Queue scans and upload scanners' reports",
  "scans:run": "Scan agents: claim external scans, send heartbeats, report results and failures",
  "vulnerabilities:read": "Read vulnerabilities, their history and VEX exports",
  "vulnerabilities:triage": "Record decisions about vulnerabilities (VEX documents)",
  "policies:read": "Read policies and evaluate them",
  "policies:write": "Create, change and delete policies and remediation deadlines",
  "webhooks:read": "Read webhook subscriptions and their deliveries",
  "webhooks:write": "Create, change and delete webhook subscriptions; redeliver",
  admin: "Every scope above",
};

/** Who is calling: the token's subject, the scopes it grants, and its teams (docs/spec/CONTRACT.md §17). */
export interface Actor extends TeamAccess {
  sub: string;
  scopes: ReadonlySet<string>;
  /** Token expiry, seconds since the epoch (long-lived connections close when it passes). */
  exp: number;
}

export const hasScope = (actor: Actor, scope: Scope): boolean =>
  actor.scopes.has(ADMIN_SCOPE) || actor.scopes.has(scope);

/** The caller, or 401 when there is none (any valid token will do). */
export function requireActor(actor: Actor | undefined): Actor {
  if (!actor) throw new DomainError("unauthenticated", "A valid bearer token is required");
  return actor;
}

/** Throws unless the actor has at least one of `scopes` (403 naming them all). */
export function requireAnyScope(maybeActor: Actor | undefined, scopes: readonly Scope[]): Actor {
  const actor = requireActor(maybeActor);
  if (!scopes.some((scope) => hasScope(actor, scope))) {
    throw new DomainError(
      "forbidden",
      `This operation needs one of the scopes ${scopes.map((s) => `'${s}'`).join(", ")}`,
      { scope: scopes.join(" ") },
    );
  }
  return actor;
}

/** The one authorization check every service calls first, whatever door the call came through. */
export function requireScope(maybeActor: Actor | undefined, scope: Scope): Actor {
  const actor = requireActor(maybeActor);
  if (!hasScope(actor, scope)) throw forbidden(scope);
  return actor;
}
