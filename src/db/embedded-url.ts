/** Where the zero-setup embedded Postgres listens (data under .data/). */
export const EMBEDDED_PORT = 54329;
export const EMBEDDED_DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${EMBEDDED_PORT}/appsec`;
