// The floor for REST reads and the GraphQL dashboard (issue 9): a bare node:http server doing what
// the service does for `GET /applications/{id}` and `GET /applications?limit=N`, and nothing else:
// the bearer checked with jose (HS256, the same claims), one named prepared statement through pg,
// the same JSON and the same next-page Link. `POST /dashboard` answers bench/rest.ts's dashboard
// query with the JSON the service's GraphQL answers, built by ONE hand-written statement.
// Its own process, so both servers compete for the machine alike.
//   BARE_PORT=… DATABASE_URL=… AUTH_JWT_SECRET=… node --import tsx bench/bare-rest-server.ts
import http from "node:http";
import { jwtVerify } from "jose";
import pg from "pg";

const COLUMNS =
  "id, name, description, criticality, owner, repo_url, service_url, language, tags, created_at, updated_at";
const BY_ID = `SELECT ${COLUMNS} FROM applications WHERE id = $1`;
const NEWEST = `SELECT ${COLUMNS} FROM applications ORDER BY created_at DESC, id DESC LIMIT $1`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// The dashboard of bench/rest.ts (DASHBOARD_QUERY), shaped as GraphQL answers it (enums upper case).
const DASHBOARD = `
WITH page AS (SELECT id, name, criticality, created_at FROM applications ORDER BY created_at DESC, id DESC LIMIT 20)
SELECT json_build_object('data', json_build_object('applications', json_build_object(
  'totalCount', (SELECT count(*) FROM applications),
  'edges', COALESCE((SELECT json_agg(json_build_object('node', json_build_object(
    'name', p.name,
    'criticality', upper(p.criticality::text),
    'vulnerabilityCounts', (
      SELECT json_build_object('total', count(*), 'unresolvedBySeverity', json_build_object(
        'critical', count(*) FILTER (WHERE unresolved AND severity = 'critical'),
        'high', count(*) FILTER (WHERE unresolved AND severity = 'high'),
        'medium', count(*) FILTER (WHERE unresolved AND severity = 'medium'),
        'low', count(*) FILTER (WHERE unresolved AND severity = 'low')))
        FROM (SELECT severity, status IN ('open', 'in_progress') AS unresolved FROM vulnerabilities WHERE application_id = p.id) v),
    'latestScans', (
      SELECT COALESCE(json_agg(json_build_object('scanType', upper(s.scan_type::text), 'status', upper(s.status::text),
        'summary', CASE WHEN s.summary IS NULL THEN NULL ELSE json_build_object('totalFindings', (s.summary->>'totalFindings')::int) END)
        ORDER BY s.scan_type), '[]')
        FROM (SELECT DISTINCT ON (scan_type) scan_type, status, summary FROM scans WHERE application_id = p.id
               ORDER BY scan_type, created_at DESC, id DESC) s),
    'vulnerabilities', json_build_object(
      'totalCount', (SELECT count(*) FROM vulnerabilities WHERE application_id = p.id),
      'edges', (SELECT COALESCE(json_agg(json_build_object('node', json_build_object(
          'title', v.title, 'severity', upper(v.severity::text), 'cvssScore', v.cvss_score)) ORDER BY v.created_at DESC, v.id DESC), '[]')
        FROM (SELECT title, severity, cvss_score, created_at, id FROM vulnerabilities WHERE application_id = p.id
               ORDER BY created_at DESC, id DESC LIMIT 10) v))
  )) ORDER BY p.created_at DESC, p.id DESC) FROM page p), '[]'))))::text AS body`;

type Row = Record<string, unknown> & { created_at: Date; updated_at: Date; id: string };

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const secret = new TextEncoder().encode(process.env.AUTH_JWT_SECRET);

const view = (r: Row) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  criticality: r.criticality,
  owner: r.owner,
  repoUrl: r.repo_url,
  serviceUrl: r.service_url,
  language: r.language,
  tags: r.tags,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

async function authorized(header: string | undefined): Promise<boolean> {
  const token = /^Bearer +(\S+)$/i.exec(header ?? "")?.[1];
  if (!token) return false;
  try {
    const { payload } = await jwtVerify(token, secret, {
      algorithms: ["HS256"],
      clockTolerance: 30,
      requiredClaims: ["exp"],
    });
    const scopes = String(payload.scope ?? "").split(" ");
    return typeof payload.sub === "string" && (scopes.includes("admin") || scopes.includes("applications:read"));
  } catch {
    return false;
  }
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

const server = http.createServer(async (req, res) => {
  try {
    if (!(await authorized(req.headers.authorization))) return send(res, 401, { code: "unauthorized" });
    const url = new URL(req.url ?? "/", "http://bare");
    const id = /^\/applications\/([^/]+)$/.exec(url.pathname)?.[1];
    if (id !== undefined) {
      if (!UUID.test(id)) return send(res, 404, { code: "not_found" });
      const { rows } = await pool.query<Row>({ name: "by-id", text: BY_ID, values: [id] });
      return rows[0] ? send(res, 200, view(rows[0])) : send(res, 404, { code: "not_found" });
    }
    if (url.pathname === "/dashboard" && req.method === "POST") {
      for await (const _ of req); // the query is fixed: read and drop the body
      // json_build_object comes back as text and goes out as it is: the floor parses nothing.
      const { rows } = await pool.query<{ body: string }>({ name: "dashboard", text: DASHBOARD });
      res.writeHead(200, { "content-type": "application/graphql-response+json; charset=utf-8" });
      return res.end(rows[0]!.body);
    }
    if (url.pathname === "/applications") {
      const limit = Number(url.searchParams.get("limit") ?? 100);
      const { rows } = await pool.query<Row>({ name: "newest", text: NEWEST, values: [limit + 1] });
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      const next =
        rows.length > limit && last
          ? Buffer.from(JSON.stringify([last.created_at.toISOString(), last.id])).toString("base64url")
          : null;
      return send(
        res,
        200,
        items.map(view),
        next ? { link: `</applications?limit=${limit}&cursor=${next}>; rel="next"` } : {},
      );
    }
    send(res, 404, { code: "not_found" });
  } catch {
    send(res, 500, { code: "internal" });
  }
});

server.listen(Number(process.env.BARE_PORT), "127.0.0.1", () => console.log("ready"));
process.on("SIGTERM", () => server.close(() => void pool.end().then(() => process.exit(0))));
