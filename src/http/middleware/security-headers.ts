// Security headers on every answer (docs/spec/CONTRACT.md §16, and the passive rules a DAST baseline scan
// applies). API answers get the policy OWASP recommends for APIs (nothing may load, nothing may
// frame them); the console and GraphiQL replace the Content-Security-Policy with their own.
import type Koa from "koa";
import { requestProtocol } from "../trusted-proxies.ts";

/** Directives no page of the service relaxes: no plugins, no <base>, no framing, forms post home. */
const LOCKED = "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** The console loads its own scripts, styles and data only, and talks to its own origin (HTTP and WebSocket). */
export const CONSOLE_CSP = `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; worker-src 'none'; ${LOCKED}`;

/**
 * GraphiQL (development only): its editor (Monaco) runs workers from the service, embeds its
 * fonts and icons as data: URLs and writes <style> elements at run time, so styles may be inline;
 * scripts still come only from the service.
 */
export const GRAPHIQL_CSP = `default-src 'self'; script-src 'self'; worker-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; ${LOCKED}`;

const HEADERS: Record<string, string> = {
  "Content-Security-Policy": API_CSP,
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Permissions-Policy":
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), payment=(), usb=()",
};

export function securityHeaders(): Koa.Middleware {
  return async (ctx, next) => {
    ctx.set(HEADERS);
    // Only meaningful over TLS (RFC 6797 §7.2: ignored, and not to be sent, over plain HTTP): the
    // socket's, or a trusted proxy's (TRUST_PROXY) that terminated it.
    if (requestProtocol(ctx) === "https") ctx.set("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
    await next();
  };
}
