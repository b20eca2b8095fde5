// What a field's selection asks for, through fragments too: lets a resolver read what its children
// will need in the same statement as its own data, and only that.
import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";

/** The fields selected at `path` below the current field (e.g. ["edges", "node"]), fragments flattened. */
function fieldsAt(info: GraphQLResolveInfo, path: readonly string[]): FieldNode[] {
  const visited = new Set<string>();
  const flatten = (set: SelectionSetNode | undefined): FieldNode[] =>
    (set?.selections ?? []).flatMap((selection) => {
      if (selection.kind === Kind.FIELD) return [selection];
      if (selection.kind === Kind.INLINE_FRAGMENT) return flatten(selection.selectionSet);
      const fragment = selection.name.value;
      if (visited.has(fragment)) return [];
      visited.add(fragment);
      return flatten(info.fragments[fragment]?.selectionSet);
    });
  let fields = info.fieldNodes.flatMap((node) => flatten(node.selectionSet));
  for (const name of path) {
    fields = fields.filter((f) => f.name.value === name).flatMap((f) => flatten(f.selectionSet));
  }
  return fields;
}

export const selectsField = (info: GraphQLResolveInfo, name: string): boolean => fieldNamesAt(info).includes(name);

// The same field under every item of a list shares its `fieldNodes`: walk them once per document.
const namesByNodes = new WeakMap<readonly FieldNode[], Map<string, string[]>>();

/** Names of the fields selected at `path` (aliases resolved to the field's own name). */
export function fieldNamesAt(info: GraphQLResolveInfo, path: readonly string[] = []): string[] {
  let byPath = namesByNodes.get(info.fieldNodes);
  if (!byPath) namesByNodes.set(info.fieldNodes, (byPath = new Map()));
  const key = path.join(".");
  let names = byPath.get(key);
  if (!names) byPath.set(key, (names = [...new Set(fieldsAt(info, path).map((f) => f.name.value))]));
  return names;
}
