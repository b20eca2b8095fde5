// The integration suite's response check (test/helpers/response-validator.ts) finds what breaks
// the document: a status it does not declare, a media type it does not name, a body its schema refuses.
import { ResponseBreaksDocument, responseValidator } from "../helpers/response-validator.ts";

const doc = {
  paths: {
    "/things/{id}": {
      get: {
        responses: {
          200: {
            content: {
              "application/json": { schema: { $ref: "#/components/schemas/Thing" } },
              "application/vnd.thing+json; version=2": { schema: { $ref: "#/components/schemas/Thing" } },
            },
          },
          404: { content: { "application/problem+json": { schema: { type: "object", required: ["status"] } } } },
          204: {},
        },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: "object",
        required: ["id", "at"],
        additionalProperties: false,
        properties: { id: { type: "string" }, at: { type: "string", format: "date-time" } },
      },
    },
  },
};

const check = responseValidator(doc);
const thing = { id: "a", at: "2026-12-03T17:00:00Z" };

it("passes answers the document describes", () => {
  expect(() => check("GET", "/things/a?x=1", 200, "application/json; charset=utf-8", thing)).not.toThrow();
  expect(() => check("GET", "/things/a", 200, "application/vnd.thing+json", thing)).not.toThrow();
  expect(() => check("GET", "/things/a", 404, "application/problem+json", { status: 404 })).not.toThrow();
  expect(() => check("GET", "/things/a", 204, null, undefined)).not.toThrow();
});

it("leaves alone what is not an operation of the document", () => {
  expect(() => check("GET", "/graphql", 500, "application/json", {})).not.toThrow();
  expect(() => check("POST", "/things/a", 418, "application/json", {})).not.toThrow();
});

it("refuses an undeclared status, an unnamed media type and a body the schema refuses", () => {
  expect(() => check("GET", "/things/a", 500, "application/json", {})).toThrow(ResponseBreaksDocument);
  expect(() => check("GET", "/things/a", 200, "application/xml+json", thing)).toThrow(/not application\/json/);
  expect(() => check("GET", "/things/a", 200, "application/json", { ...thing, extra: 1 })).toThrow(/additional/);
  expect(() => check("GET", "/things/a", 200, "application/json", { id: "a", at: "yesterday" })).toThrow(/date-time/);
  expect(() => check("GET", "/things/a", 404, "application/problem+json", {})).toThrow(/status/);
});
