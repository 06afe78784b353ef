import { createServer } from "node:net";
import { DatabaseUnavailable } from "@platter/domain";
import { Effect, Exit } from "effect";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { databaseFailureKind, type DatabaseFailureKind, orDieButOutage, poolRows, retryWhileUnavailable, ServerSilent } from "../src/index.ts";

/**
 * The one classification of the driver's failures: an outage (the server is not there right now)
 * by Node's error code, PostgreSQL's SQLSTATE (a class or a code) or our watchdog's error, and by
 * pg's words only for its plain errors that carry no code; a refusal of the data by SQLSTATE class
 * 22 or 23; anything else a defect.
 */

/** pg's error for a message from the server, with its SQLSTATE. */
const serverError = (code: string, message = "from the server"): pg.DatabaseError =>
  Object.assign(new pg.DatabaseError(message, message.length, "error"), { code });

/** Node's error for a socket, with its errno name. */
const socketError = (code: string): Error => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code });

/** MikroORM's exceptions wrap the driver's error as `previous` and copy its SQLSTATE as `sqlState`. */
const ormWrapped = (error: Error & { code?: string }) =>
  Object.assign(new Error(`wrapped: ${error.message}`), { name: "DriverException", previous: error, sqlState: error.code });

const CASES: ReadonlyArray<readonly [string, unknown, DatabaseFailureKind]> = [
  ["connection refused (ECONNREFUSED)", socketError("ECONNREFUSED"), "unavailable"],
  ["connection reset (ECONNRESET)", socketError("ECONNRESET"), "unavailable"],
  ["socket timeout (ETIMEDOUT)", socketError("ETIMEDOUT"), "unavailable"],
  ["every address refused (AggregateError)", new AggregateError([socketError("ECONNREFUSED"), socketError("ECONNREFUSED")], ""), "unavailable"],
  ["admin shutdown (57P01)", serverError("57P01", "terminating connection due to administrator command"), "unavailable"],
  ["crash shutdown (57P02)", serverError("57P02"), "unavailable"],
  ["cannot connect now (57P03)", serverError("57P03", "the database system is starting up"), "unavailable"],
  ["too many connections (53300)", serverError("53300"), "unavailable"],
  ["statement timeout (57014)", serverError("57014", "canceling statement due to statement timeout"), "unavailable"],
  ["connection failure (class 08: 08006)", serverError("08006"), "unavailable"],
  ["cannot establish a connection (class 08: 08001)", serverError("08001"), "unavailable"],
  ["the server went away (pg: Connection terminated unexpectedly)", new Error("Connection terminated unexpectedly"), "unavailable"],
  ["connect timeout (pg: Connection terminated due to connection timeout)",
    new Error("Connection terminated due to connection timeout", { cause: new Error("Connection terminated unexpectedly") }), "unavailable"],
  ["acquire timeout (pg-pool: timeout exceeded when trying to connect)", new Error("timeout exceeded when trying to connect"), "unavailable"],
  ["the pool closed (pg-pool)", new Error("Cannot use a pool after calling end on the pool"), "unavailable"],
  ["a broken client (pg: not queryable)", new Error("Client has encountered a connection error and is not queryable"), "unavailable"],
  ["a silent server (our watchdog)", new ServerSilent(2_000), "unavailable"],
  ["an outage wrapped by the ORM", ormWrapped(serverError("57P01")), "unavailable"],
  ["an outage as the cause of another error", new Error("query failed", { cause: socketError("ECONNREFUSED") }), "unavailable"],
  ["already typed (DatabaseUnavailable)", new DatabaseUnavailable({ reason: socketError("ECONNREFUSED") }), "unavailable"],
  ["a unique violation (23505)", serverError("23505"), "data refusal"],
  ["an invalid text representation (22P02)", serverError("22P02"), "data refusal"],
  ["a refusal wrapped by the ORM", ormWrapped(serverError("23503")), "data refusal"],
  ["an undefined table (42P01)", serverError("42P01"), "defect"],
  ["a deadlock (40P01)", serverError("40P01"), "defect"],
  ["disk full (53100)", serverError("53100"), "defect"],
  ["pg's words with a SQLSTATE of another kind", serverError("42601", "Connection terminated"), "defect"],
  ["pg's words inside another message", new Error("the report says: Connection terminated unexpectedly"), "defect"],
  ["a bug", new TypeError("cannot read properties of undefined"), "defect"],
  ["not an error", "Connection terminated unexpectedly", "defect"],
  ["nothing", undefined, "defect"],
];

describe("databaseFailureKind", () => {
  it.each(CASES)("%s: %s", (_name, error, kind) => {
    expect(databaseFailureKind(error)).toBe(kind);
  });

  it("reads a real refused connection of pg as an outage", async () => {
    const port = await new Promise<number>((done) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => done(typeof address === "object" && address !== null ? address.port : 0));
      });
    });
    const pool = new pg.Pool({ connectionString: `postgres://nobody@127.0.0.1:${port}/none`, connectionTimeoutMillis: 2_000 });
    try {
      const exit = await Effect.runPromiseExit(poolRows(pool, { text: "select 1" }));
      expect(Exit.isFailure(exit) && exit.cause.reasons[0]?._tag).toBe("Fail");
      expect(Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error?: unknown }).error : undefined).toBeInstanceOf(DatabaseUnavailable);
    } finally {
      await pool.end();
    }
  });
});

describe("orDieButOutage", () => {
  const outage = new DatabaseUnavailable({ reason: new Error("Connection terminated unexpectedly") });
  const missing = new Error("a row that must exist is missing");
  it.each([
    ["an outage stays a failure", Effect.fail(outage), "Fail", outage],
    ["any other failure becomes a defect", Effect.fail(missing), "Die", missing],
  ] as const)("%s", async (_name, effect, reason, error) => {
    const exit = await Effect.runPromiseExit(orDieButOutage(effect as Effect.Effect<never, DatabaseUnavailable | Error>));
    const [first] = Exit.isFailure(exit) ? exit.cause.reasons : [];
    expect(first?._tag).toBe(reason);
    expect(first?._tag === "Fail" ? first.error : first?._tag === "Die" ? first.defect : undefined).toBe(error);
  });
});

/**
 * A start's first connections: a server that answered the start's wait may still refuse the next
 * connection (here refused by a real port nobody listens on, twice), which is tried again
 * until the start's deadline; a failure of another kind, or past the deadline, ends the start.
 */
describe("retryWhileUnavailable", () => {
  const connectOnce = async (port: number) => {
    const client = new pg.Client({ host: "127.0.0.1", port, user: "nobody", connectionTimeoutMillis: 2_000 });
    client.on("error", () => {});
    try {
      await client.connect();
    } finally {
      await client.end().catch(() => {});
    }
  };

  it("tries again while the database is unavailable, until it answers", async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((done) => server.close(() => done()));
    const failures: unknown[] = [];
    const opened = await retryWhileUnavailable(Date.now() + 30_000, async () => {
      if (failures.length === 2) return "opened";
      try {
        await connectOnce(port);
      } catch (error) {
        failures.push(error);
        throw error;
      }
      return "unexpected";
    });
    expect(opened).toBe("opened");
    expect(failures.map((error) => (error as { code?: string }).code)).toEqual(["ECONNREFUSED", "ECONNREFUSED"]);
  });

  it.each([
    ["a failure of another kind, at once", () => new TypeError("a bug"), 30_000, 1],
    ["an outage past the deadline", () => Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), 0, 1],
  ])("throws %s", async (_, failure, withinMs, calls) => {
    let tries = 0;
    const thrown = await retryWhileUnavailable(Date.now() + withinMs, async () => {
      tries++;
      throw failure();
    }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(Error);
    expect(tries).toBe(calls);
  });
});
