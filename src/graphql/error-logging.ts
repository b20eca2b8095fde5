// Unexpected errors are masked for the caller (errors.ts) and logged here, through the logger of
// the operation's service context: over HTTP the request's child logger, which carries requestId.
// The database being unreachable goes to its health instead, which logs the outage once.
// Runs before Yoga's masking plugin, so the cause is still attached.
import { useErrorHandler, type Plugin } from "graphql-yoga";
import type { DatabaseHealth } from "../db/database-health.ts";
import type { Logger } from "../log.ts";
import type { GraphQLContext } from "./context.ts";
import { causeOf, isUnexpected } from "./errors.ts";

function loggerOf(context: unknown, fallback: Logger): Logger {
  // In the execution phase envelop hands over the execution args, whose contextValue is ours.
  const candidate = (context as { contextValue?: unknown } | undefined)?.contextValue ?? context;
  return (candidate as Partial<GraphQLContext> | undefined)?.service?.log ?? fallback;
}

export function errorLoggingPlugin(log: Logger, health?: Pick<DatabaseHealth, "failed">): Plugin<GraphQLContext> {
  return useErrorHandler(({ errors, context }) => {
    for (const error of errors) {
      if (!isUnexpected(error) || health?.failed(causeOf(error))) continue;
      loggerOf(context, log).error(
        { err: causeOf(error), path: (error as { path?: unknown }).path },
        "unexpected GraphQL error",
      );
    }
  });
}
