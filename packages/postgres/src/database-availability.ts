import pg from "pg";

/**
 * Telling "the database is not there right now" from everything else. An outage (stopped, frozen,
 * restarting, out of connections, too slow) is expected on a shared service: callers answer it
 * with 503 and wait for it to pass. Anything else that fails in storage stays a defect.
 */

/** Socket-level failures: the server is not reachable. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ENOTFOUND"]);
/** SQLSTATEs of a server going away, not yet accepting, full, or cancelling a statement that ran too long. */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300", "57014"]);
/** node-postgres's own words for a connection that died or never came, or a server that did not answer in time. */
const DRIVER_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|not queryable|Connection ended/i;

const isOutage = (error: { code?: unknown; sqlState?: unknown; message?: unknown }): boolean => {
  const code = typeof error.code === "string" ? error.code : typeof error.sqlState === "string" ? error.sqlState : "";
  return NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith("08") ||
    (typeof error.message === "string" && DRIVER_MESSAGES.test(error.message));
};

/** Whether `error` (or anything it wraps) says the database is unavailable rather than that something is wrong. */
export const isDatabaseUnavailable = (error: unknown, depth = 0): boolean => {
  if (typeof error !== "object" || error === null || depth > 5) return false;
  if (isOutage(error)) return true;
  const wrapped = error as { cause?: unknown; previous?: unknown; errors?: unknown };
  return [wrapped.cause, wrapped.previous, ...(Array.isArray(wrapped.errors) ? wrapped.errors : [])].some((inner) =>
    isDatabaseUnavailable(inner, depth + 1)
  );
};

/**
 * Whether `error` (or anything it wraps) is PostgreSQL refusing the statement's data: SQLSTATE class
 * 22 (data exception: a bad encoding, a value out of range) or 23 (integrity constraint). Such a
 * refusal is about some rows, so a batch may be split to keep the others; disk full, out of memory
 * or a deadlock is not, and splitting would only add statements while the server is under pressure.
 */
export const isDataRefusal = (error: unknown, depth = 0): boolean => {
  if (typeof error !== "object" || error === null || depth > 5) return false;
  const { code, sqlState } = error as { code?: unknown; sqlState?: unknown };
  const state = typeof code === "string" ? code : typeof sqlState === "string" ? sqlState : "";
  if (/^2[23][0-9A-Z]{3}$/.test(state)) return true;
  const wrapped = error as { cause?: unknown; previous?: unknown; errors?: unknown };
  return [wrapped.cause, wrapped.previous, ...(Array.isArray(wrapped.errors) ? wrapped.errors : [])].some((inner) =>
    isDataRefusal(inner, depth + 1)
  );
};

/** The database did not answer within the start timeout, or refused us for a reason waiting will not fix. */
export class DatabaseUnreachable extends Error {
  /** `host:port` from the URL (never its password). */
  readonly address: string;
  constructor(address: string, reason: string) {
    super(`cannot reach the database at ${address}: ${reason}; check DATABASE_URL and that the server runs there`);
    this.name = "DatabaseUnreachable";
    this.address = address;
  }
}

const describe = (error: unknown): string => {
  const e = error as { code?: string; message?: string; errors?: Array<{ code?: string; message?: string }> };
  const first = e.errors?.[0] ?? e;
  return [first.code, first.message].filter((part) => part !== undefined && part !== "").join(": ") || String(error);
};

const addressOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || "5432"}`;
};

/**
 * Waits until the database at `url` answers `select 1`, trying every second for up to `timeoutMs`
 * (each try bounded by `connectTimeoutMs`) and telling `onWaiting` why after each failed try. An
 * outage is waited out; a refusal waiting cannot fix (a wrong password, a database that does not
 * exist) fails at once. Fails with `DatabaseUnreachable`.
 */
export const waitForDatabase = async (
  url: string,
  timeoutMs: number,
  connectTimeoutMs: number,
  onWaiting: (reason: string) => void,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
    client.on("error", () => {}); // a connection dropped while we look is just a failed try
    try {
      await client.connect();
      await client.query("select 1");
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw new DatabaseUnreachable(addressOf(url), describe(error));
      if (Date.now() >= deadline) {
        throw new DatabaseUnreachable(addressOf(url), `${describe(error)}, still after ${Math.round(timeoutMs / 1000)} s`);
      }
      onWaiting(describe(error));
      await new Promise((done) => setTimeout(done, Math.min(1000, Math.max(0, deadline - Date.now()))));
    } finally {
      await client.end().catch(() => {});
    }
  }
};
