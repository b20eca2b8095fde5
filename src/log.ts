import pino from "pino";

export type Logger = pino.Logger;

/** Structured JSON logs; anything that could carry a credential is redacted at the source. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: [
        "authorization",
        "*.authorization",
        "headers.authorization",
        "*.headers.authorization",
        "token",
        "*.token",
        "secret",
        "*.secret",
        "*.*.secret",
      ],
      censor: "********",
    },
  });
}
