// Queries run as JavaScript compiled for their document (graphql-jit), cached with the parsed
// document: a dashboard's thousand fields then cost property reads, not the generic executor's
// walk of the schema for every field of every row. Mutations and subscriptions keep graphql-js.
import { useGraphQlJit } from "@envelop/graphql-jit";
import { getOperationAST } from "graphql";

export const compiledQueries = () =>
  useGraphQlJit({}, { enableIf: (args) => getOperationAST(args.document, args.operationName)?.operation === "query" });
