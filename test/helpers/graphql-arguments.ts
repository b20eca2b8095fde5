// Operations generated from the schema to compare arguments written in the document with the same
// arguments passed as variables: a root field given every argument it takes, the fields of its type
// that need none, and the variants of that one operation (every argument inline, each one alone as a
// variable, all of them as variables). A client's generated documents send the variable form.
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
} from "graphql";

/**
 * The value a test gives the argument or input field at `at` ("Query.applications.after",
 * "ApplicationFilter.owner"), as a client writes it (enums by name); undefined leaves it to the type.
 */
export type Pick = (at: string, type: GraphQLInputType) => unknown;

/**
 * A value for `type`: what `pick` says, else one from the type itself: an enum's second value (its
 * first is often a default), a list of an enum's every other value, an input object with all its
 * fields. Identifiers, strings and other scalars have no value of their own: `pick` must give one,
 * so an argument added to the schema fails here until the test knows what to give it.
 */
export function sampleValue(at: string, type: GraphQLInputType, pick: Pick): unknown {
  const picked = pick(at, type);
  if (picked !== undefined) return picked;
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    const item = getNullableType(nullable.ofType);
    if (isEnumType(item)) return item.getValues().flatMap((v, i) => (i % 2 === 1 ? [v.name] : []));
    return [sampleValue(at, nullable.ofType, pick)];
  }
  if (isEnumType(nullable)) return (nullable.getValues()[1] ?? nullable.getValues()[0]!).name;
  if (isInputObjectType(nullable))
    return Object.fromEntries(
      Object.values(nullable.getFields()).map((f) => [f.name, sampleValue(`${nullable.name}.${f.name}`, f.type, pick)]),
    );
  if (isScalarType(nullable) && nullable.name === "Int") return 2;
  if (isScalarType(nullable) && nullable.name === "Boolean") return true;
  throw new Error(`No value for ${at} (${String(type)}): the test's pick must give one`);
}

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** A JSON value as a GraphQL literal (for the JSON scalar). */
function untypedLiteral(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `[${value.map(untypedLiteral).join(", ")}]`;
  if (typeof value === "object") {
    return `{ ${Object.entries(value as Record<string, unknown>)
      .map(([key, v]) => {
        if (!GRAPHQL_NAME.test(key)) throw new Error(`"${key}" cannot be a field of a GraphQL object literal`);
        return `${key}: ${untypedLiteral(v)}`;
      })
      .join(", ")} }`;
  }
  if (typeof value === "string") return JSON.stringify(value); // JSON's escapes are GraphQL's
  return String(value);
}

/** A client's value for `type` written as a GraphQL literal. */
export function literal(value: unknown, type: GraphQLInputType): string {
  if (value === null) return "null";
  if (isNonNullType(type)) return literal(value, type.ofType);
  if (isListType(type)) return `[${(value as unknown[]).map((v) => literal(v, type.ofType)).join(", ")}]`;
  if (isEnumType(type)) return String(value);
  if (isInputObjectType(type)) {
    const fields = type.getFields();
    return `{ ${Object.entries(value as Record<string, unknown>)
      .map(([name, v]) => `${name}: ${literal(v, fields[name]!.type)}`)
      .join(", ")} }`;
  }
  if (type.name === "JSON") return untypedLiteral(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new Error(`No literal for ${JSON.stringify(value)} of ${type.name}`);
}

/**
 * Every field of `type` that takes no argument, objects `depth` levels down, each type once on a
 * path (Scan.application → Application.latestScans → Scan goes no further).
 */
export function selectionOf(type: GraphQLOutputType, depth = 4, path: readonly string[] = []): string {
  const named = getNamedType(type);
  if (isLeafType(named)) return "";
  if (!isObjectType(named)) throw new Error(`No selection for ${named.name}: only object types are walked`);
  const fields = Object.values(named.getFields()).flatMap((f) => {
    if (f.args.length > 0) return [];
    const inner = getNamedType(f.type);
    if (isLeafType(inner)) return [f.name];
    if (depth <= 1 || path.includes(inner.name) || inner.name === named.name) return [];
    const selection = selectionOf(f.type, depth - 1, [...path, named.name]);
    return selection ? [`${f.name} ${selection}`] : [];
  });
  return fields.length ? `{ ${fields.join(" ")} }` : "";
}

export interface Variant {
  /** "inline", "$name" (that argument alone a variable) or "all variables". */
  label: string;
  query: string;
  variables: Record<string, unknown>;
}

/**
 * The operation calling `field` with `values`: every argument inline; each alone as a variable; all as
 * variables; and all as variables left to their definitions' defaults (none sent).
 */
export function variantsOf(
  operation: "query" | "mutation" | "subscription",
  field: GraphQLField<unknown, unknown>,
  values: Record<string, unknown>,
): Variant[] {
  const given = field.args.filter((a) => a.name in values);
  const selection = selectionOf(field.type);
  const build = (label: string, asVariables: ReadonlySet<string>, byDefault = false): Variant => {
    const variables = given.filter((a) => asVariables.has(a.name));
    const definitions = variables.map(
      (a) => `$${a.name}: ${String(a.type)}${byDefault ? ` = ${literal(values[a.name], a.type)}` : ""}`,
    );
    const args = given.map(
      (a) => `${a.name}: ${asVariables.has(a.name) ? `$${a.name}` : literal(values[a.name], a.type)}`,
    );
    return {
      label,
      query: `${operation}${definitions.length ? `(${definitions.join(", ")})` : ""} { ${field.name}${
        args.length ? `(${args.join(", ")})` : ""
      } ${selection} }`,
      variables: byDefault ? {} : Object.fromEntries(variables.map((a) => [a.name, values[a.name]])),
    };
  };
  const all = new Set(given.map((a) => a.name));
  const variants = [build("inline", new Set()), ...given.map((a) => build(`$${a.name}`, new Set([a.name])))];
  if (given.length > 1) variants.push(build("all variables", all));
  if (given.length > 0) variants.push(build("all variables by default", all, true));
  return variants;
}

/** The fields of a root type that take arguments, the ones whose literal and variable forms can differ. */
export const fieldsWithArguments = (type: { getFields(): Record<string, GraphQLField<unknown, unknown>> }) =>
  Object.values(type.getFields()).filter((f) => f.args.length > 0);
