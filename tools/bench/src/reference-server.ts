import { createHash } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import { encodeCursor } from "@platter/domain";
import pg from "pg";

/**
 * The reference: what a hand-written server would do for `GET /v1/events`, with none of our
 * layers (no Koa, no Effect, no ORM). It does the same work per request as the API: one query on
 * `api_keys` by SHA-256 hash, then the same keyset SQL as the event repository, then a JSON
 * list envelope with a next cursor. Like the API it prepares its statements (named, so each
 * connection parses and plans them once): the comparison is of the processes, not of what
 * PostgreSQL is asked to do. Only this one endpoint exists; anything else is a 404.
 */

interface KeyRow {
  organization_id: string;
  currency: string;
}

interface EventRow {
  id: string;
  name: string;
  event_date: string | null;
  guests: number | null;
  price_per_head_minor: string | null;
  event_type: string | null;
  status: string;
  client_id: string | null;
  created_at: string;
}

const AUTHENTICATE = `select k.organization_id, o.currency from api_keys k join organizations o on o.id = k.organization_id
  where k.key_hash = $1 and k.revoked_at is null`;

// The event repository's statement, written with numbered parameters.
const COLUMNS = `e.id, e.name, e.event_date::text as event_date, e.guests, e.price_per_head_minor, e.event_type,
  e.status, e.client_id, to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at`;
const FIRST_PAGE = `select ${COLUMNS} from events e where e.organization_id = $1
  order by e.created_at desc, e.id desc limit $2`;
const NEXT_PAGE = `select ${COLUMNS} from events e where e.organization_id = $1
  and (e.created_at, e.id) < ($3::timestamptz, $4::bigint) order by e.created_at desc, e.id desc limit $2`;

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 500;
const CHECKSUM_BYTES = 8;
/** Minor-unit exponents of the currencies that are not cents; good enough for a reference. */
const EXPONENTS: Record<string, number> = { JPY: 0, KRW: 0, BHD: 3, KWD: 3 };

const send = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
};

/** `[created_at, id]` from one of our events cursors, checksum checked; `undefined` when malformed. */
const cursorKey = (cursor: string): [string, number] | undefined => {
  const bytes = Buffer.from(cursor, "base64url");
  if (bytes.length <= CHECKSUM_BYTES) return undefined;
  const payload = bytes.subarray(0, bytes.length - CHECKSUM_BYTES);
  const sum = createHash("sha256").update(payload).digest().subarray(0, CHECKSUM_BYTES);
  if (!sum.equals(bytes.subarray(bytes.length - CHECKSUM_BYTES))) return undefined;
  try {
    const [version, endpoint, createdAt, id] = JSON.parse(payload.toString("utf8")) as unknown[];
    if (version !== 1 || endpoint !== "events" || typeof createdAt !== "string" || !Number.isSafeInteger(id)) return undefined;
    return [createdAt, id as number];
  } catch {
    return undefined;
  }
};

const toEvent = (row: EventRow, currency: string) => ({
  id: Number(row.id),
  name: row.name,
  event_date: row.event_date,
  guests: row.guests,
  price_per_head:
    row.price_per_head_minor === null ? null : Number(row.price_per_head_minor) / 10 ** (EXPONENTS[currency] ?? 2),
  currency,
  event_type: row.event_type,
  status: row.status,
  client_id: row.client_id === null ? null : Number(row.client_id),
  created_at: row.created_at,
});

/** How a server answers: node:http's `send`, or Koa's `ctx.status` and `ctx.body` (tools/bench's ladder). */
export type Reply = (status: number, body: unknown) => void;

/** The reference's `GET /v1/events` for the caller presenting `authorization`, answered through `reply`. */
export const referenceEvents = async (pool: pg.Pool, authorization: string | undefined, url: URL, reply: Reply): Promise<void> => {
  const auth = /^Bearer +(\S+) *$/i.exec(authorization ?? "")?.[1];
  if (auth === undefined) return reply(401, { error: "Unauthenticated" });
  const hash = createHash("sha256").update(auth).digest("hex");
  const { rows: keys } = await pool.query<KeyRow>({ name: "authenticate", text: AUTHENTICATE, values: [hash] });
  const key = keys[0];
  if (key === undefined) return reply(401, { error: "Unauthenticated" });

  const rawLimit = Number(url.searchParams.get("limit") ?? DEFAULT_LIMIT);
  const limit = Number.isInteger(rawLimit) && rawLimit > 0 ? Math.min(rawLimit, MAX_LIMIT) : DEFAULT_LIMIT;
  const cursor = url.searchParams.get("cursor");
  const after = cursor === null ? undefined : cursorKey(cursor);
  if (cursor !== null && after === undefined) return reply(400, { error: "Invalid cursor" });
  const { rows } = after === undefined
    ? await pool.query<EventRow>({ name: "first_page", text: FIRST_PAGE, values: [key.organization_id, limit + 1] })
    : await pool.query<EventRow>({ name: "next_page", text: NEXT_PAGE, values: [key.organization_id, limit + 1, after[0], after[1]] });

  const hasMore = rows.length > limit;
  const data = (hasMore ? rows.slice(0, limit) : rows).map((row) => toEvent(row, key.currency));
  const last = data[data.length - 1];
  reply(200, {
    data,
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined ? encodeCursor("events", [last.created_at, last.id]) : null,
  });
};

/** The reference's HTTP server (not yet listening), answering from `pool`. */
export const referenceServer = (pool: pg.Pool): Server =>
  createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== "/v1/events") return send(res, 404, { error: "Unknown endpoint" });
    referenceEvents(pool, req.headers.authorization, url, (status, body) => send(res, status, body)).catch(() => send(res, 500, { error: "Internal server error" }));
  });
