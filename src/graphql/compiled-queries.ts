// Queries and subscriptions run as JavaScript compiled for their document (graphql-jit), cached with
// the parsed document: a dashboard's thousand fields then cost property reads, not the generic
// executor's walk of the schema for every field of every row, and each event a subscription streams
// becomes its result the same way. Mutations keep graphql-js. Variables that do not coerce never get
// here (uncoercibleVariablesRefused). graphql-jit's own subscribe handed the field's resolver the
// operation's variables as its arguments (graphql-jit#183): patches/graphql-jit+0.8.7.patch gives it
// the arguments.
import { useGraphQlJit } from "@envelop/graphql-jit";
import { getOperationAST } from "graphql";

export const compiledQueries = () =>
  useGraphQlJit(
    {},
    { enableIf: (args) => getOperationAST(args.document, args.operationName)?.operation !== "mutation" },
  );
