// GraphQL arguments → the REST-shaped objects the domain services validate.

/** Plain objects with the supplied fields only: omitted stays omitted, explicit null stays null. */
export function restShaped(input: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(input)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, v !== null && typeof v === "object" && !Array.isArray(v) ? restShaped(v) : v]),
  );
}
