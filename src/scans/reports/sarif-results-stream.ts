// A SARIF log read as a stream (@streamparser/json): each result of each run is handed over on its
// own and then dropped, so a 50 MiB log of 100,000 results never becomes one parsed document.
// What remains when the stream ends is the log's outline: every run with its tool, rules,
// artifacts and provenance, and its `results` emptied.
import { Tokenizer, TokenParser, TokenType, type ParsedElementInfo } from "@streamparser/json";
import { MAX_INPUT_DEPTH } from "../../domain/validation.ts";
import { DomainError, invalid } from "../../errors.ts";
import { jsonPointer } from "./json-pointer.ts";

export interface StreamedResult {
  run: number;
  index: number;
  result: unknown;
}

/** Bytes fed to the parser at a time: the results they complete are handed over before the next. */
const SLICE = 256 * 1024;

/**
 * The keys leading to where the tokenizer is, kept only to name the place where a document nests
 * deeper than MAX_INPUT_DEPTH, which is refused there, before the parser's stack grows with it.
 */
function depthGuard(): (token: TokenType, value: unknown) => void {
  const keys: (string | number)[] = [];
  let lastString = "";
  return (token, value) => {
    switch (token) {
      case TokenType.LEFT_BRACE:
      case TokenType.LEFT_BRACKET:
        if (keys.length >= MAX_INPUT_DEPTH) {
          throw invalid("The report is invalid", [
            { path: jsonPointer(keys), message: `Must not be nested deeper than ${MAX_INPUT_DEPTH} levels` },
          ]);
        }
        keys.push(token === TokenType.LEFT_BRACE ? "" : 0);
        break;
      case TokenType.RIGHT_BRACE:
      case TokenType.RIGHT_BRACKET:
        keys.pop();
        break;
      case TokenType.STRING:
        lastString = value as string;
        break;
      case TokenType.COLON:
        keys[keys.length - 1] = lastString;
        break;
      case TokenType.COMMA:
        if (typeof keys.at(-1) === "number") (keys[keys.length - 1] as number)++;
        break;
    }
  };
}

/**
 * Yields `runs[run].results[index]` one at a time and returns the outline, or `undefined` when the
 * document has no results there (it may be a log without results, or another format: read it
 * whole). Throws SyntaxError, as JSON.parse does, when the bytes are not one JSON document, and a
 * validation DomainError when it nests too deep.
 */
export function* sarifResults(bytes: Uint8Array): Generator<StreamedResult, Record<string, unknown> | undefined> {
  const tokenizer = new Tokenizer();
  // Not keepStack: false, which drops every value outside the paths, the outline with them.
  const parser = new TokenParser({ paths: ["$.runs.*.results.*"] });
  const guard = depthGuard();
  tokenizer.onToken = (token) => {
    guard(token.token, token.value);
    parser.write(token);
  };
  let outline: Record<string, unknown> | undefined;
  const ready: StreamedResult[] = [];
  // stack[i] is the container at depth i - 1 with the key under which depth i sits: [·, root → "runs", runs → run, run → "results"].
  parser.onValue = ({ value, key, parent, stack }: ParsedElementInfo) => {
    outline = stack[1]!.value as Record<string, unknown>;
    // The result just completed is handed over instead of kept (`results` may also be an object, which the schema refuses).
    if (Array.isArray(parent)) parent.pop();
    else delete (parent as Record<string, unknown>)[key as string];
    ready.push({ run: stack[2]!.key as number, index: key as number, result: value });
  };
  try {
    for (let offset = 0; offset < bytes.length; offset += SLICE) {
      tokenizer.write(bytes.subarray(offset, offset + SLICE));
      yield* ready.splice(0);
    }
    if (!tokenizer.isEnded) tokenizer.end();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw new SyntaxError(`The report is not a JSON document: ${(err as Error).message}`);
  }
  if (!parser.isEnded) throw new SyntaxError("The report is not a JSON document: it ends before its last value");
  return outline;
}
