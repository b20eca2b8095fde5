// What counts as the database being unreachable (answered 503, logged once) and what is a query's own
// error (left to the usual handling): the one classification REST, GraphQL and the workers share.
import { DatabaseUnavailable, isConnectionError } from "../../src/db/database-health.ts";
import { Prisma } from "../../src/generated/prisma/client.ts";

const socketError = (code: string) =>
  Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: "connect" });
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: "FATAL" });
const prismaError = (code: string, cause: object) =>
  new Prisma.PrismaClientKnownRequestError("Can't reach database server", {
    code,
    clientVersion: "6.19.3",
    meta: { driverAdapterError: { cause } },
  });

it.each([
  ["a refused connection", socketError("ECONNREFUSED")],
  ["a reset connection", socketError("ECONNRESET")],
  ["pg: the server went away mid-query", new Error("Connection terminated unexpectedly")],
  ["pg-pool: no connection in time", new Error("timeout exceeded when trying to connect")],
  ["Postgres shutting down", pgError("57P01", "terminating connection due to administrator command")],
  ["Postgres starting up", pgError("57P03", "the database system is starting up")],
  ["a connection exception", pgError("08006", "connection failure")],
  ["Prisma: cannot reach the server", prismaError("P1001", { kind: "DatabaseNotReachable" })],
  ["Prisma's adapter: the connection closed", prismaError("P2010", { kind: "ConnectionClosed" })],
  ["one wrapped in another's cause", new Error("recording failed", { cause: socketError("ECONNREFUSED") })],
  ["the service's own", new DatabaseUnavailable()],
])("%s is the database being unreachable", (_label, err) => {
  expect(isConnectionError(err)).toBe(true);
});

it.each([
  ["a unique violation", pgError("23505", "duplicate key value violates unique constraint")],
  ["a syntax error", pgError("42601", "syntax error at or near")],
  [
    "Prisma's unique violation",
    new Prisma.PrismaClientKnownRequestError("Unique constraint failed", { code: "P2002", clientVersion: "6.19.3" }),
  ],
  ["a serialization failure", pgError("40001", "could not serialize access")],
  ["anything else", new Error("boom")],
  ["not an error at all", "ECONNREFUSED"],
])("%s is not", (_label, err) => {
  expect(isConnectionError(err)).toBe(false);
});
