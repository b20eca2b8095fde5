// A local web site for the DAST baseline engine to scan, over http or https (a self-signed
// certificate the test trusts), recording every request it receives.
import http from "node:http";
import https from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export type SiteHandler = (req: http.IncomingMessage, res: http.ServerResponse, site: TargetSite) => void;

export interface TargetSite {
  /** `http://127.0.0.1:<port>` or `https://…`. */
  origin: string;
  port: number;
  url(path?: string): string;
  requests: ReceivedRequest[];
  /** Paths requested, in order. */
  paths(): string[];
  close(): Promise<void>;
}

export async function startTargetSite(
  handler: SiteHandler,
  options: { tls?: { key: string; cert: string }; host?: string } = {},
): Promise<TargetSite> {
  const host = options.host ?? "127.0.0.1";
  const site: TargetSite = {
    origin: "",
    port: 0,
    url: (path = "/") => `${site.origin}${path}`,
    requests: [],
    paths: () => site.requests.map((r) => r.path),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    site.requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers });
    handler(req, res, site);
  };
  const server = options.tls ? https.createServer(options.tls, listener) : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  site.port = (server.address() as AddressInfo).port;
  site.origin = `${options.tls ? "https" : "http"}://${host}:${site.port}`;
  return site;
}
