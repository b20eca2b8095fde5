// GraphQL arguments → the REST-shaped objects the domain services validate.
/** A plain object with the supplied fields only: omitted stays omitted, explicit null stays null. */
export function restShaped(input: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

