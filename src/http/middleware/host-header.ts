// A Host header that is not `host[:port]` is a 400 on every route (docs/spec/CONTRACT.md §2): the absolute URLs
// the service builds from it (Link headers, the URL GraphQL requests are handed over with) could not
// be made, and nothing else about such a request can be trusted either.
import type Koa from "koa";
import { HttpProblem, problem } from "../problem.ts";

function isWellFormedHost(host: string): boolean {
  try {
    const url = new URL(`http://${host}`);
    // Anything the parser would read as more than a host and port (a path, credentials) is not one.
    return (
      url.host !== "" &&
      url.username === "" &&
      url.password === "" &&
      url.pathname === "/" &&
      url.search === "" &&
      url.hash === ""
    );
  } catch {
    return false;
  }
}

export function requireWellFormedHost(): Koa.Middleware {
  return async (ctx, next) => {
    const host = ctx.get("Host");
    if (host !== "" && !isWellFormedHost(host)) {
      throw new HttpProblem(
        problem("validation_failed", "The Host header is malformed", [
          { path: "Host", message: "Must be a host name or address, with an optional port" },
        ]),
      );
    }
    await next();
  };
}
