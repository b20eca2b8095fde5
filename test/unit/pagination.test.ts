import { encodeCursor, parsePageRequest } from "../../src/domain/pagination.ts";
import { DomainError } from "../../src/errors.ts";
import { newId } from "../../src/ids.ts";

describe("parsePageRequest", () => {
  it("defaults the limit to 100", () => {
    expect(parsePageRequest({})).toEqual({ limit: 100 });
  });

  it.each(["0", "501", "abc", "1.5", "-3", ""])("rejects limit=%p", (limit) => {
    expect(() => parsePageRequest({ limit })).toThrow(DomainError);
  });

  it("accepts a cursor it issued and rejects one it did not", () => {
    const cursor = encodeCursor({ createdAt: new Date(), id: newId() });
    expect(parsePageRequest({ limit: "5", cursor })).toEqual({ limit: 5, cursor });
    expect(() => parsePageRequest({ cursor: "not-a-cursor" })).toThrow(DomainError);
    expect(() => parsePageRequest({ cursor: Buffer.from('["x","y"]').toString("base64url") })).toThrow(DomainError);
    const forged = (date: string) => Buffer.from(JSON.stringify([date, newId()])).toString("base64url");
    for (const date of [
      "0000-01-01T00:00:00.000Z",
      "-010000-01-01T00:00:00.000Z",
      "+275760-09-13T00:00:00.000Z",
      "2026-11-21",
      "2026-11-21T10:00:00Z",
    ]) {
      expect(() => parsePageRequest({ cursor: forged(date) })).toThrow(DomainError);
    }
  });
});
