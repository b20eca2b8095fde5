// graphql-jit's subscriptions as patched (patches/graphql-jit+*.patch), on a schema of their own whose
// inputs do not survive being coerced twice: an enum whose internal values are not its names, inside
// a list and an input object, and a scalar whose parsed value is not a client's. Unpatched, the field's
// subscriber got the operation's variables instead of its arguments (graphql-jit#183), each event's
// result coerced the already coerced variables again (an error per event instead of its data), and
// variables left to their defaults were refused (a non-null one) or came as JSON (a Date as a string).
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  parse,
  type ExecutionResult,
} from "graphql";
import { compileQuery, isCompiledQuery } from "graphql-jit";

const Kind = new GraphQLEnumType({
  name: "Kind",
  values: { SCAN_DONE: { value: "scan.done" }, HIGH: { value: "high" } },
});
/** A day, parsed from "YYYY-MM-DD" into a Date, which is not a day a client could send. */
const Day = new GraphQLScalarType<Date, string>({
  name: "Day",
  serialize: (value) => (value as Date).toISOString().slice(0, 10),
  parseValue: (value) => {
    if (typeof value !== "string" || !/^\d{4}-\d\d-\d\d$/.test(value)) throw new TypeError("Day: YYYY-MM-DD");
    return new Date(`${value}T00:00:00Z`);
  },
  parseLiteral: (node) => {
    if (node.kind !== "StringValue") throw new TypeError("Day: a string");
    return new Date(`${node.value}T00:00:00Z`);
  },
});
const Filter = new GraphQLInputObjectType({
  name: "Filter",
  fields: { kinds: { type: new GraphQLList(new GraphQLNonNull(Kind)) }, since: { type: Day } },
});

/** The arguments each subscription's subscriber was given, in the order subscribed. */
const subscribed: unknown[] = [];
const Echo = new GraphQLObjectType({
  name: "Echo",
  fields: {
    n: { type: GraphQLString },
    kind: { type: Kind, args: { as: { type: Kind } }, resolve: (_e, args) => args.as },
    day: { type: Day, args: { of: { type: Day } }, resolve: (_e, args) => args.of },
  },
});

const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: "Query", fields: { unused: { type: GraphQLString } } }),
  subscription: new GraphQLObjectType({
    name: "Subscription",
    fields: {
      echo: {
        type: Echo,
        args: { kind: { type: Kind }, filter: { type: Filter }, day: { type: Day }, label: { type: GraphQLString } },
        subscribe: async function* (_root, args) {
          subscribed.push(args);
          for (let n = 1; n <= 3; n++) yield { echo: { n: String(n) } };
        },
      },
    },
  }),
});

async function run(query: string, variables: Record<string, unknown>): Promise<ExecutionResult[]> {
  const compiled = compileQuery(schema, parse(query));
  if (!isCompiledQuery(compiled) || !compiled.subscribe) throw new Error(JSON.stringify(compiled));
  const stream = await compiled.subscribe(undefined, {}, variables);
  if (!(Symbol.asyncIterator in stream)) return [stream];
  const results: ExecutionResult[] = [];
  for await (const result of stream as AsyncIterable<ExecutionResult>) results.push(result);
  return results;
}

const SELECTION = "{ n kind(as: $kind) day(of: $day) }";
const ARGUMENTS = `kind: $kind, filter: $filter, day: $day, label: $label`;

it("gives the subscriber and every event the same arguments, inline or as variables", async () => {
  subscribed.length = 0;
  const values = { kind: "HIGH", filter: { kinds: ["SCAN_DONE"], since: "2026-11-30" }, day: "2026-12-01", label: "x" };
  const inline = await run(
    `subscription { echo(kind: HIGH, filter: { kinds: [SCAN_DONE], since: "2026-11-30" }, day: "2026-12-01", label: "x") ${SELECTION.replace("$kind", "HIGH").replace("$day", '"2026-12-01"')} }`,
    {},
  );
  const asVariables = await run(
    `subscription($kind: Kind, $filter: Filter, $day: Day, $label: String) { echo(${ARGUMENTS}) ${SELECTION} }`,
    values,
  );
  // Left to their definitions' defaults, a non-null one among them (graphql-jit's own parsing
  // refused that one as "not provided", and gave a Day default as a string).
  const byDefault = await run(
    `subscription($kind: Kind! = HIGH, $filter: Filter = { kinds: [SCAN_DONE], since: "2026-11-30" }, $day: Day = "2026-12-01", $label: String! = "x") { echo(${ARGUMENTS}) ${SELECTION} }`,
    {},
  );
  const inList = await run(
    `subscription($kinds: [Kind!], $since: Day, $kind: Kind, $day: Day) { echo(kind: $kind, filter: { kinds: $kinds, since: $since }, day: $day, label: "x") ${SELECTION} }`,
    { kinds: ["SCAN_DONE"], since: "2026-11-30", kind: "HIGH", day: "2026-12-01" },
  );

  const expected = [1, 2, 3].map((n) => ({ data: { echo: { n: String(n), kind: "HIGH", day: "2026-12-01" } } }));
  expect(inline).toEqual(expected);
  expect(asVariables).toEqual(expected);
  expect(byDefault).toEqual(expected);
  expect(inList).toEqual(expected);
  const args = {
    kind: "high",
    filter: { kinds: ["scan.done"], since: new Date("2026-11-30T00:00:00Z") },
    day: new Date("2026-12-01T00:00:00Z"),
    label: "x",
  };
  expect(subscribed).toEqual([args, args, args, args]);
});

it("still refuses variables that do not coerce, once, before subscribing", async () => {
  subscribed.length = 0;
  const [result] = await run(`subscription($kind: Kind) { echo(kind: $kind) { n } }`, { kind: "high" });
  expect(result!.errors?.map((e) => e.message)).toEqual([
    'Variable "$kind" got invalid value "high"; Value "high" does not exist in "Kind" enum. Did you mean the enum value "HIGH"?',
  ]);
  expect(subscribed).toEqual([]);
});
