// Query hardening: depth, cost, aliases, directives and size (tokens); no "did you mean" hints in
// production (they leak the schema to callers who cannot introspect it). A refused query says which
// limit it broke (graphql-armor words every refusal as a "Syntax Error", which it is not), and
// introspection is exempt from the depth and cost limits (docs/spec/CONTRACT.md §8): the standard introspection
// query of GraphQL tools nests `ofType` deeper than any data query may.
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import { GraphQLError, Kind, type DocumentNode, type ValidationContext } from "graphql";

export const GRAPHQL_LIMITS = {
  maxDepth: 10,
  maxCost: 50_000,
  maxAliases: 15,
  maxDirectives: 20,
  maxTokens: 2_000,
} as const;

const INTROSPECTION_FIELDS = new Set(["__schema", "__type", "__typename"]);

/** True when every operation asks for introspection fields only (at its root). */
export function isIntrospectionOnly(document: DocumentNode): boolean {
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  return (
    operations.length > 0 &&
    operations.every((op) =>
      op.selectionSet.selections.every((s) => s.kind === Kind.FIELD && INTROSPECTION_FIELDS.has(s.name.value)),
    )
  );
}

const limitError = (error: GraphQLError) => new GraphQLError(error.message.replace(/^Syntax Error: /, ""));

/** Reports the broken limit as a validation error (the query is not run). */
const report = (context: ValidationContext | null, error: GraphQLError) => context?.reportError(limitError(error));
const reportUnlessIntrospection = (context: ValidationContext | null, error: GraphQLError) => {
  if (context && isIntrospectionOnly(context.getDocument())) return;
  report(context, error);
};
const asValidationError = { propagateOnRejection: false, onReject: [report] };

export function armorPlugin(production: boolean) {
  return EnvelopArmorPlugin({
    maxDepth: {
      n: GRAPHQL_LIMITS.maxDepth,
      exposeLimits: true,
      propagateOnRejection: false,
      onReject: [reportUnlessIntrospection],
    },
    costLimit: {
      maxCost: GRAPHQL_LIMITS.maxCost,
      objectCost: 2,
      scalarCost: 1,
      depthCostFactor: 1.5,
      exposeLimits: true,
      propagateOnRejection: false,
      onReject: [reportUnlessIntrospection],
    },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, exposeLimits: true, ...asValidationError },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, exposeLimits: true, ...asValidationError },
    // Counted while parsing, which must stop there: the error replaces armor's, it is not reported later.
    maxTokens: {
      n: GRAPHQL_LIMITS.maxTokens,
      exposeLimits: true,
      onReject: [
        (_context, error) => {
          throw limitError(error);
        },
      ],
    },
    blockFieldSuggestion: { enabled: production },
  });
}
