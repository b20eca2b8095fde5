// Preloaded into the service by the vex suite (`node --import`): counts the SQL statements every pg
// client sends, and writes the count to stderr on SIGUSR2, so the suite can count what one VEX
// takes from outside the process. Bench only: nothing in the service knows of it.
import pg from "pg";

let statements = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) {
  statements++;
  return query.apply(this, args);
};
process.on("SIGUSR2", () => process.stderr.write(`statements=${statements}\n`));
