import { gql } from "../helpers/graphql.ts";
import { startTestApp } from "../helpers/test-app.ts";
it("dbg", async () => {
  const t = await startTestApp({ LOG_LEVEL: "error" });
  const res = await gql(t, `{ applications { totalCount } }`);
  console.log(res.status, res.text);
  await t.close();
});
