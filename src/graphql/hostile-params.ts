// Hostile GraphQL request parameters are the caller's mistake (400), never the server's (500):
// parameters that are not JSON where JSON is due (`variables` or `extensions` in a query string or a
// form body, multipart `operations`), and variables no input may hold (docs/spec/CONTRACT.md §2: nesting deeper
// than 64 levels, a lone UTF-16 surrogate, U+0000), refused with their path whichever operation or
// transport (HTTP, SSE, graphql-ws) carries them, and variables that do not coerce to their types.
import { getOperationAST, getVariableValues, GraphQLError, type DocumentNode, type GraphQLSchema } from "graphql";
import { createGraphQLError, type Plugin } from "graphql-yoga";
import { unsafeInput } from "../domain/validation.ts";
import { invalid } from "../errors.ts";
import { domainErrorToGraphQL } from "./errors.ts";

type RequestParser = (request: Request) => unknown;

/**
 * Yoga's parsers JSON.parse what they read and let a SyntaxError through, which would be masked as
 * an unexpected error (500). Whatever a parser throws that is not already a GraphQL error is about
 * the request it was reading, so it becomes a 400 like Yoga's own answer to a malformed JSON body.
 */
export function unparsableParamsAsBadRequest(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
      const parse = requestParser as RequestParser;
      setRequestParser((async (request: Request) => {
        try {
          return await parse(request);
        } catch (err) {
          if (err instanceof GraphQLError) throw err;
          throw createGraphQLError(
            "The GraphQL request parameters could not be parsed (variables, extensions and operations must be JSON)",
            {
              extensions: { code: "BAD_REQUEST", http: { status: 400 } },
            },
          );
        }
      }) as typeof requestParser);
    },
  };
}

/** The error for variables no input may hold, or null; HTTP status 400, as Yoga gives bad variables. */
export function unsafeVariablesError(variables: unknown): GraphQLError | null {
  const unsafe = unsafeInput(variables ?? {});
  if (!unsafe) return null;
  const error = domainErrorToGraphQL(invalid(`Variables are invalid at '${unsafe.path}': ${unsafe.message}`, [unsafe]));
  return createGraphQLError(error.message, { extensions: { ...error.extensions, http: { status: 400 } } });
}

interface OperationArgs {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}

/** A plugin that answers `errors` instead of running an operation (query, mutation or subscription) for which `check` finds some. */
function refusing(check: (args: OperationArgs) => GraphQLError[]): Plugin {
  const refuse = ({
    args,
    setResultAndStopExecution,
  }: {
    args: OperationArgs;
    setResultAndStopExecution(result: { errors: GraphQLError[] }): void;
  }) => {
    const errors = check(args);
    if (errors.length > 0) setResultAndStopExecution({ errors });
  };
  return { onExecute: refuse, onSubscribe: refuse };
}

/** Checked before execution starts, so neither variable coercion nor a resolver sees them. */
export const unsafeVariablesRefused = (): Plugin =>
  refusing((args) => [unsafeVariablesError(args.variableValues)].filter((e) => e !== null));

/**
 * Variables that do not coerce to their declared types, refused before any executor runs, with
 * BAD_USER_INPUT and HTTP status 400 whatever the operation: graphql-tools words only a subscription's
 * so (a query's had no code), and graphql-jit, which runs queries and subscriptions, gives no code.
 */
export const uncoercibleVariablesRefused = (): Plugin =>
  refusing((args) => {
    const operation = getOperationAST(args.document, args.operationName);
    if (!operation) return []; // the executor answers that itself
    const { errors = [] } = getVariableValues(
      args.schema,
      operation.variableDefinitions ?? [],
      args.variableValues ?? {},
    );
    return errors.map((error) =>
      createGraphQLError(error.message, {
        nodes: error.nodes,
        extensions: { ...error.extensions, code: "BAD_USER_INPUT", http: { status: 400 } },
      }),
    );
  });
