// The Relay connection types (`<Name>Connection`, `<Name>Edge`) of the schema; their values are
// built by connection-shape.ts.
import { builder } from "./builder.ts";
import type { ConnectionShape } from "./connection-shape.ts";

/** A Relay connection type (`<Name>Connection`, `<Name>Edge`) without totalCount. */
export function plainConnection(type: Parameters<typeof builder.connectionObject>[0]["type"], name: string) {
  return builder.connectionObject({ type, name: `${name}Connection` }, { name: `${name}Edge` });
}

/** A Relay connection type (`<Name>Connection`, `<Name>Edge`) with a lazily counted totalCount. */
export function countedConnection<T extends object>(
  type: Parameters<typeof builder.connectionObject>[0]["type"],
  name: string,
) {
  return builder.connectionObject(
    {
      type,
      name: `${name}Connection`,
      fields: (t) => ({
        totalCount: t.int({ resolve: (connection) => (connection as unknown as ConnectionShape<T>).totalCount() }),
      }),
    },
    { name: `${name}Edge` },
  );
}
