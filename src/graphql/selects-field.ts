// Whether a field's selection asks for a given subfield, through fragments too: lets a resolver
// read what its children will need in the same statement as its own data.
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";

export function selectsField(info: GraphQLResolveInfo, name: string): boolean {
  const visited = new Set<string>();
  const inSet = (set: SelectionSetNode | undefined): boolean =>
    (set?.selections ?? []).some((selection) => {
      if (selection.kind === Kind.FIELD) return selection.name.value === name;
      if (selection.kind === Kind.INLINE_FRAGMENT) return inSet(selection.selectionSet);
      const fragment = selection.name.value;
      if (visited.has(fragment)) return false;
      visited.add(fragment);
      return inSet(info.fragments[fragment]?.selectionSet);
    });
  return info.fieldNodes.some((node) => inSet(node.selectionSet));
}
