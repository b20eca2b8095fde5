import { v7 as uuidv7, validate, version } from "uuid";

/** Identifiers are UUIDv7: time-ordered, opaque to clients. */
export const newId = (): string => uuidv7();

/** What isId takes, for the API document: a UUID of version 7 (RFC 9562). */
export const ID_PATTERN = "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-7[0-9A-Fa-f]{3}-[89ABab][0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}$";

/** A string that could be one of our ids; anything else is simply not found. */
export const isId = (value: string): boolean => validate(value) && version(value) === 7;
