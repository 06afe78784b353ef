import type { Socket } from "node:net";
import type pg from "pg";

/** How long a dead connection may stay checked out before the watchdog hands it back to the pool itself. */
const DEAD_CONNECTION_GRACE_MS = 1_000;

/** A connection's server sent nothing for longer than its statements may run: the watchdog destroyed its socket (an outage). */
export class ServerSilent extends Error {
  override readonly name = "ServerSilent";
  constructor(silenceMs: number) {
    super(`Query read timeout: the database sent nothing for ${silenceMs} ms`);
  }
}

/**
 * Gives up on a checked-out connection whose server has sent nothing for `silenceMs` (a frozen or
 * vanished server; a live one answers or cancels within `statement_timeout`): its socket is
 * destroyed, so whatever waits on it fails at once with `ServerSilent`, an outage. One
 * interval for the pool and nothing per statement: node-postgres's own `query_timeout` arms a timer
 * per statement, and the garbage that left cost about a fifth of a list request's CPU (an A/B of
 * tools/bench on this machine, 2026-11-23: 1,394 µs per request with it, 1,111 without).
 *
 * It also returns to the pool a checked-out connection that has been dead (its socket destroyed,
 * by the watchdog or by the server going away) for `DEAD_CONNECTION_GRACE_MS` without its holder
 * releasing it: Kysely (under MikroORM) releases a transaction's connection only after its
 * `commit`/`rollback` succeeded, so a transaction caught by an outage kept its pool slot forever
 * (seen after a 10 s freeze under load: most of the pool gone until the process restarted, apps/api/test/database-outage.test.ts).
 * Returns the stop.
 */
export const watchSilence = (pool: pg.Pool, silenceMs: number): (() => void) => {
  const streamOf = (client: pg.PoolClient) => (client as unknown as { connection: { stream: Socket } }).connection.stream;
  /** Checked-out connections: bytes read when last looked at, since when that count stands, and since when it is dead. */
  const held = new Map<pg.PoolClient, { bytesRead: number; since: number; deadSince?: number }>();
  pool.on("acquire", (client) => void held.set(client, { bytesRead: streamOf(client).bytesRead, since: performance.now() }));
  pool.on("release", (_error: unknown, client: pg.PoolClient) => void held.delete(client));
  pool.on("remove", (client) => void held.delete(client as pg.PoolClient));
  const timer = setInterval(() => {
    const now = performance.now();
    for (const [client, seen] of held) {
      const stream = streamOf(client);
      if (stream.destroyed) {
        seen.deadSince ??= now;
        if (now - seen.deadSince > DEAD_CONNECTION_GRACE_MS) {
          held.delete(client);
          // With an error, the pool drops the connection and opens a new one when needed.
          client.release(new Error("the connection died while checked out and its holder never released it"));
        }
      } else if (stream.bytesRead !== seen.bytesRead) {
        seen.bytesRead = stream.bytesRead;
        seen.since = now;
      } else if (now - seen.since > silenceMs) {
        seen.deadSince = now;
        stream.destroy(new ServerSilent(silenceMs));
      }
    }
  }, Math.min(250, silenceMs / 4));
  timer.unref();
  return () => clearInterval(timer);
};
