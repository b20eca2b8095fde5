// TRUST_PROXY: which peers' X-Forwarded-For and X-Forwarded-Proto the service believes, as a
// number of proxy hops in front of it or the proxies' addresses and networks (proxy-addr, the
// rules Express applies). Without it the socket's peer is the client and the protocol the socket's,
// so a client cannot claim another address or that it came over https.
import type { IncomingMessage } from "node:http";
import type Koa from "koa";
import proxyaddr from "proxy-addr";

/** Whether the peer at `address`, `hop` steps from the service (0: the socket's), is a trusted proxy. */
export type TrustProxy = (address: string, hop: number) => boolean;

/**
 * A number of hops ("1": the load balancer in front), or addresses, CIDRs and proxy-addr's names;
 * undefined for nobody ("" or "0"), when the socket alone tells.
 */
export function parseTrustProxy(value: string): TrustProxy | undefined {
  const setting = value.trim();
  if (setting === "" || setting === "0") return undefined;
  if (/^\d+$/.test(setting)) {
    const hops = Number(setting);
    return (_address, hop) => hop < hops;
  }
  // Throws on what is neither an address, a network nor one of loopback, linklocal, uniquelocal.
  return proxyaddr.compile(setting.split(",").map((s) => s.trim()));
}

const PROTOCOL = Symbol("request protocol");

function forwardedProtocol(req: IncomingMessage, trust: TrustProxy): "http" | "https" {
  if ((req.socket as { encrypted?: boolean }).encrypted) return "https";
  if (!trust(req.socket.remoteAddress ?? "", 0)) return "http";
  // The first proxy's (the one the client reached), as Express and Koa read it.
  const header = req.headers["x-forwarded-proto"];
  const first = (Array.isArray(header) ? header[0] : header)?.split(",")[0]?.trim().toLowerCase();
  return first === "https" ? "https" : "http";
}

/** The client's address (ctx.ip, which rate limits key on) and protocol, as TRUST_PROXY says to read them. */
export function forwardedRequest(trust: TrustProxy): Koa.Middleware {
  return async (ctx, next) => {
    ctx.request.ip = proxyaddr(ctx.req, trust);
    (ctx.state as Record<symbol, unknown>)[PROTOCOL] = forwardedProtocol(ctx.req, trust);
    await next();
  };
}

/** The protocol the client used: a trusted proxy's X-Forwarded-Proto, or the socket's (Koa's, trusting no proxy). */
export const requestProtocol = (ctx: Koa.Context): string =>
  ((ctx.state as Record<symbol, unknown>)[PROTOCOL] as string | undefined) ?? ctx.protocol;
