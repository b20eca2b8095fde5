// The executor that yoga runs, as patched (patches/@graphql-tools+executor+*.patch): the events of one
// subscription share one collection of its fields. Unpatched, each event collected the root fields
// anew, and each new collection became one more entry of the executor's long-lived memo maps, kept
// (and promoted) until a full collection: a replay of 100,000 events left 100,000 of them.
import { subscribe } from "@graphql-tools/executor";
import {
  GraphQLInt,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
  type FieldNode,
  type ExecutionResult,
} from "graphql";

/** What each resolver saw of its field's nodes, per event. */
const seen = { root: [] as (readonly FieldNode[])[], nested: [] as (readonly FieldNode[])[] };

const Tick = new GraphQLObjectType({
  name: "Tick",
  fields: {
    n: { type: GraphQLInt },
    label: {
      type: GraphQLString,
      resolve: (tick: { n: number }, _args, _ctx, info) => {
        seen.nested.push(info.fieldNodes);
        return `tick ${tick.n}`;
      },
    },
  },
});

const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: "Query", fields: { ok: { type: GraphQLInt } } }),
  subscription: new GraphQLObjectType({
    name: "Subscription",
    fields: {
      ticks: {
        type: Tick,
        args: { upTo: { type: GraphQLInt } },
        async *subscribe(_root, { upTo }: { upTo: number }) {
          for (let n = 1; n <= upTo; n++) yield { n };
        },
        resolve: (payload: { n: number }, _args, _ctx, info) => {
          seen.root.push(info.fieldNodes);
          return payload;
        },
      },
    },
  }),
});

async function run(upTo: number): Promise<ExecutionResult[]> {
  const stream = await subscribe({
    schema,
    document: parse("subscription($upTo: Int) { ticks(upTo: $upTo) { n label } }"),
    variableValues: { upTo },
  });
  if (!(Symbol.asyncIterator in stream)) throw new Error(`not a stream: ${JSON.stringify(stream)}`);
  const results: ExecutionResult[] = [];
  for await (const result of stream as AsyncIterable<ExecutionResult>) results.push(result);
  return results;
}

beforeEach(() => {
  seen.root.length = 0;
  seen.nested.length = 0;
});

it("collects a subscription's fields once for all its events, at the root and below", async () => {
  const results = await run(5);
  expect(results.map((r) => r.data)).toEqual([1, 2, 3, 4, 5].map((n) => ({ ticks: { n, label: `tick ${n}` } })));
  expect(seen.root).toHaveLength(5);
  expect(new Set(seen.root).size).toBe(1);
  expect(new Set(seen.nested).size).toBe(1);
});

it("collects anew for another subscription (its own variables)", async () => {
  await run(2);
  await run(2);
  expect(seen.root).toHaveLength(4);
  expect(new Set(seen.root).size).toBe(2);
});
