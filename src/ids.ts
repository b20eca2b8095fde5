import { v7 as uuidv7, validate, version } from "uuid";

/** Identifiers are UUIDv7: time-ordered, opaque to clients. */
export const newId = (): string => uuidv7();

/** A string that could be one of our ids; anything else is simply not found. */
export const isId = (value: string): boolean => validate(value) && version(value) === 7;
