// Query hardening: depth, cost, aliases, directives and size (tokens); no "did you mean" hints in
// production (they leak the schema to callers who cannot introspect it).
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";

export const GRAPHQL_LIMITS = {
  maxDepth: 10,
  maxCost: 50_000,
  maxAliases: 15,
  maxDirectives: 20,
  maxTokens: 2_000,
} as const;

export function armorPlugin(production: boolean) {
  return EnvelopArmorPlugin({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost, objectCost: 2, scalarCost: 1, depthCostFactor: 1.5 },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    blockFieldSuggestion: { enabled: production },
  });
}
