// Queries and subscriptions run as JavaScript compiled for their document (graphql-jit), cached with
// the parsed document: a dashboard's thousand fields then cost property reads, not the generic
// executor's walk of the schema for every field of every row, and each event a subscription streams
// becomes its result the same way. Mutations keep graphql-js. Variables that do not coerce never get
// here (uncoercibleVariablesRefused).
// graphql-jit is patched (patches/graphql-jit+0.8.7.patch) where its answers differed from the same
// operation with its arguments written inline (issue 59): its subscribe gave the field's subscriber
// the operation's variables as its arguments (graphql-jit#183, open); each event's result coerced the
// variables a second time, as if the coerced values were a client's, an error per event for an enum
// variable (`types: $t`; not reported upstream yet, still so in 0.8.9); and its own variable parsing
// refused a non-null variable left to its default (graphql-js coerces the variables instead, as
// graphql-jit#228, open, proposes). The patch goes when a graphql-jit release passes
// test/unit/graphql-jit-subscription-arguments.test.ts without it.
import { useGraphQlJit } from "@envelop/graphql-jit";
import { getOperationAST } from "graphql";

export const compiledQueries = () =>
  useGraphQlJit(
    {},
    { enableIf: (args) => getOperationAST(args.document, args.operationName)?.operation !== "mutation" },
  );
