import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import {
  type ControlledPostgres, createOrganization, createTestDatabase, type OrganizationFixture, startControlledPostgres, type TestDatabase,
} from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deliveriesOf, type DispatcherProcess, killLeftoverDispatchers, type Receiver, startDispatcherProcess, startReceiver, waitFor,
} from "./dispatcher-harness.ts";

/**
 * A dispatcher process rides out its database going away while deliveries are in flight, on a
 * PostgreSQL of this test's own that is frozen (SIGSTOP, as a hung machine: connections open, nothing
 * answers) for longer than DATABASE_CONNECT_TIMEOUT and DATABASE_STATEMENT_TIMEOUT, so every new
 * connection times out ("Connection terminated due to connection timeout"), the pool's wait times out
 * and the silence watchdog gives up on the connections it holds; its ops port is scraped meanwhile,
 * as a Prometheus server does. Afterwards the process is still running, every delivery is delivered,
 * and each was received exactly once: the lease (15 s) outlasts the outage (4 s) and the attempts
 * in flight (1 s), so no lease runs out while the database is away, and the results of the attempts
 * that ended during the outage are kept and written once it is back (a result lost would leave its
 * delivery leased, to be sent again when its lease ran out). The log says once that the database
 * went away and once that it is back.
 */

const OUTAGE_MS = 4_000;
const ANSWER_DELAY_MS = 1_000;

let postgres: ControlledPostgres;
let db: TestDatabase;
let org: OrganizationFixture;
let receiver: Receiver;

beforeAll(async () => {
  postgres = await startControlledPostgres();
  db = await createTestDatabase(postgres.adminUrl);
  org = await createOrganization(db, "Outage Caterers");
  receiver = await startReceiver(() => ({ status: 200, delayMs: ANSWER_DELAY_MS }));
  await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, receiver.url, [], generateSigningSecret())));
}, 60_000);

afterAll(async () => {
  await killLeftoverDispatchers();
  await receiver?.close();
  await db?.dispose().catch(() => {});
  await postgres?.dispose();
});

const createClients = async (prefix: string, count: number) => {
  for (let i = 0; i < count; i++) await db.run(Clients.create(apiKeyActor(org.scope), { name: `${prefix} ${i}` }));
};

const logLines = (dispatcher: DispatcherProcess, message: RegExp) =>
  dispatcher.output().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { msg: string })
    .filter((line) => message.test(line.msg));

const statusOf = async (url: string): Promise<number> => {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  await response.text();
  return response.status;
};

describe("a dispatcher whose database connections time out", () => {
  it("keeps running, delivers everything, and sends nothing twice while no lease runs out", async () => {
    await createClients("Before", 20);
    const dispatcher = await startDispatcherProcess(db.url, {
      DATABASE_CONNECT_TIMEOUT: "300ms",
      DATABASE_STATEMENT_TIMEOUT: "1s",
      DATABASE_POOL_SIZE: "3",
      WEBHOOK_LEASE: "15s",
      WEBHOOK_TIMEOUT: "5s",
      LOG_LEVEL: "info",
    });
    await waitFor("attempts in flight", () => receiver.inFlight() > 0, 20_000);

    await postgres.freeze();
    try {
      // While frozen: attempts end and hand their results over, claims and writes time out, and a
      // scrape of the ops port reads the queue's gauges from the database.
      await new Promise((done) => setTimeout(done, OUTAGE_MS / 2));
      expect(await statusOf(`${dispatcher.opsUrl}/metrics`)).toBe(503);
      expect(await statusOf(`${dispatcher.opsUrl}/readyz`)).toBe(503);
      await new Promise((done) => setTimeout(done, OUTAGE_MS / 2));
    } finally {
      await postgres.thaw();
    }
    // Committed after the outage: found again (LISTEN reconnected, or the poll).
    await createClients("After", 5);

    const deliveries = await waitFor("every delivery to settle", async () => {
      const all = await deliveriesOf(db, org.id);
      return all.length === 25 && all.every((d) => d.status !== "pending") ? all : undefined;
    }, 60_000);
    expect(dispatcher.child.exitCode).toBeNull();
    expect(dispatcher.child.signalCode).toBeNull();
    expect(await statusOf(`${dispatcher.opsUrl}/healthz`)).toBe(200);
    expect(deliveries.map((d) => d.status)).toEqual(Array(25).fill("succeeded"));
    const counts = receiver.countsByEnvelope();
    expect(counts.size).toBe(25);
    expect([...counts.values()]).toEqual(Array(25).fill(1));
    expect(logLines(dispatcher, /^database unavailable/)).toHaveLength(1);
    await waitFor("the recovery to be logged", () => logLines(dispatcher, /^database available again/).length > 0, 10_000);
    expect(logLines(dispatcher, /^database available again/)).toHaveLength(1);
    expect(await dispatcher.terminate()).toEqual({ code: 0, signal: null });
  }, 120_000);
});

/**
 * Stopped rather than frozen: PostgreSQL shuts down (every connection, LISTEN's too, is closed by the
 * server) and starts again on the same port. What committed while the dispatcher was reconnecting
 * is found when it is back; it then LISTENs again, and since it polls only every ten minutes here,
 * what commits once it is idle reaches it by NOTIFY alone.
 */
describe("a dispatcher whose database is stopped and started again", () => {
  it("listens again and catches up on what committed meanwhile, without waiting for its poll", async () => {
    const dispatcher = await startDispatcherProcess(db.url, {
      DISPATCHER_POLL_INTERVAL: "10m",
      WEBHOOK_LEASE: "15s",
      WEBHOOK_TIMEOUT: "5s",
      LOG_LEVEL: "info",
    });
    const settled = async (expected: number) => {
      const all = await deliveriesOf(db, org.id);
      return all.length === expected && all.every((d) => d.status === "succeeded") ? all : undefined;
    };
    const before = (await deliveriesOf(db, org.id)).length;
    await createClients("Before the stop", 3);
    await waitFor("the deliveries before the stop", () => settled(before + 3), 30_000);

    await postgres.stop("fast");
    await waitFor("the outage to be logged", () => logLines(dispatcher, /^database unavailable/).length > 0, 20_000);
    await postgres.start();
    // At once, while the dispatcher is still reconnecting (it retries every second): found when it is back.
    await createClients("After the start", 5);
    await waitFor("the deliveries committed while it reconnected", () => settled(before + 8), 60_000);
    await waitFor("the recovery to be logged", () => logLines(dispatcher, /^database available again/).length > 0, 10_000);
    // LISTEN again, on a connection of its own; then idle, so only a NOTIFY finds what comes next.
    await waitFor("the dispatcher to LISTEN again", async () =>
      (await db.orm.em.getConnection().execute<Array<{ n: number }>>(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and query = 'listen platter_deliveries'",
      ))[0]!.n === 1, 20_000);
    await new Promise((done) => setTimeout(done, 2_000));
    await createClients("Once it listens", 2);
    const deliveries = await waitFor("the deliveries committed once it listens", () => settled(before + 10), 60_000);
    expect(deliveries).toHaveLength(before + 10);
    expect(dispatcher.child.exitCode).toBeNull();
    const counts = receiver.countsByEnvelope();
    expect(counts.size).toBe(before + 10);
    expect([...counts.values()]).toEqual(Array(before + 10).fill(1));
    expect(logLines(dispatcher, /^database unavailable/)).toHaveLength(1);
    expect(logLines(dispatcher, /^database available again/)).toHaveLength(1);
    expect(await dispatcher.terminate()).toEqual({ code: 0, signal: null });
  }, 120_000);
});
