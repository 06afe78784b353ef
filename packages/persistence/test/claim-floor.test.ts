import { generateSigningSecret, type DeliveryPolicy } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DeliveryRepository, HistoryPartitions, inOneTransaction, WEBHOOK_HISTORY, WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import {
  backdateHistory, createOrganization, createTestDatabase, nothingHeld, type OrganizationFixture, retryingDeliveryPolicy, type TestDatabase,
  testDeliveryPolicy, withRawClient,
} from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * The claim's floor from below (`claim_floors`): the retention's turn raises it past the partitions holding nothing
 * pending, so the claims read none of them (partitioned-history-plans.test.ts counts their blocks). Whatever is
 * pending below it is still claimed: a replay lowers it in its own statement, a delivery waiting for its retry keeps
 * it down, and a delivery written by a transaction still open when it rose is not below it.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const rows = <Row>(text: string, values: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(text, values);

/** The claim's floor now. */
const claimFloor = async (): Promise<Date> =>
  new Date((await rows<{ made_from: Date }>("select made_from from claim_floors where table_name = 'webhook_deliveries'"))[0]!.made_from);

/** The retention's turn, with a retention nothing here reaches (nothing settled, nothing dropped): the floor raised. */
const retentionTurn = () => db.run(HistoryPartitions.use((h) => h.forgetExpired(WEBHOOK_HISTORY, 30 * 24 * 3600_000, 500)));

/** One claim of everything due, each claimed delivery recorded `outcome` (none stays leased); the ids of `org`'s. */
const claimed = (org: OrganizationFixture, outcome: "succeeded" | "failed", policy: DeliveryPolicy = testDeliveryPolicy) =>
  db.run(Effect.gen(function* () {
    const queue = yield* DeliveryQueue;
    const { due, unreadable } = yield* queue.claimDue(100, 60_000, policy, nothingHeld);
    const all = [...due, ...unreadable];
    yield* queue.recordAttempts(all.map((delivery) => ({
      delivery, startedAt: new Date(), durationMs: 3, statusCode: outcome === "succeeded" ? 200 : 500, error: undefined, responseBody: "", outcome,
    })), policy);
    return all.filter((delivery) => delivery.organizationId === org.id).map((delivery) => delivery.id);
  }));

/** Waits, polling every 20 ms for at most a minute, until `count` (SQL of one row `n`) counts one or more. */
const until = async (count: string) => {
  for (let tries = 0; (await rows<{ n: number }>(count))[0]!.n === 0; tries++) {
    if (tries === 3_000) throw new Error(`never counted within a minute: ${count}`);
    await new Promise((done) => setTimeout(done, 20));
  }
};

/** An organization with one endpoint and one client created (its message's one delivery, pending), 10 days back. */
const organizationTenDaysBack = async (name: string) => {
  const org = await createOrganization(db, name);
  await db.run(Effect.gen(function* () {
    yield* (yield* WebhookEndpointRepository).add(org.scope, `https://198.51.100.9/${org.id}`, [], generateSigningSecret());
    yield* createClient(org.scope, { name: `${name} client` });
  }));
  await backdateHistory(db.url, "m.organization_id = $1", [org.id], "now() - interval '10 days'");
  return org;
};

/** A delivery as these tests read it. */
interface DeliveryRow {
  readonly id: string;
  readonly message_id: string;
  readonly endpoint_id: string;
  readonly status: string;
  readonly created_at: Date;
}
/** `org`'s one delivery. */
const deliveryOf = async (org: OrganizationFixture): Promise<DeliveryRow> => {
  const [row] = await rows<DeliveryRow>("select id, message_id, endpoint_id, status, created_at from webhook_deliveries where organization_id = ?", [org.id]);
  return { ...row!, created_at: new Date(row!.created_at) };
};

/** A replay of `delivery` (finished, or failed for the endpoint's), as the application's `Deliveries` runs each. */
type Replay = (org: OrganizationFixture, delivery: DeliveryRow) => Effect.Effect<{ retried: number }, unknown, DeliveryRepository>;

const REPLAYS: ReadonlyArray<readonly [name: string, outcome: "succeeded" | "failed", replay: Replay]> = [
  ["a delivery sent again (retry)", "succeeded", (org, delivery) => DeliveryRepository.use((r) => r.retry(org.scope, Number(delivery.id)))],
  ["a message sent again (retryMessage)", "succeeded", (org, delivery) => DeliveryRepository.use((r) => r.retryMessage(org.scope, Number(delivery.message_id)))],
  ["an endpoint's failed deliveries sent again (retryFailed)", "failed", (org, delivery) =>
    DeliveryRepository.use((r) => r.retryFailed(org.scope, Number(delivery.endpoint_id)))],
];

describe("the claim's floor", () => {
  it.each(REPLAYS)("%s, 10 days back, below the floor: the replay lowers the floor to it, and it is claimed", async (name, outcome, replay) => {
    const org = await organizationTenDaysBack(`Replayed ${name}`);
    const [first] = await claimed(org, outcome);
    const delivery = await deliveryOf(org);
    expect({ id: first, status: delivery.status }).toEqual({ id: Number(delivery.id), status: outcome });

    await retentionTurn();
    // Nothing pending anywhere: the floor rose to the oldest open transaction's start, past the delivery.
    expect((await claimFloor()).getTime()).toBeGreaterThan(delivery.created_at.getTime());

    expect(await db.run(replay(org, delivery))).toEqual({ retried: 1 });
    expect(await claimFloor()).toEqual(delivery.created_at);
    expect(await claimed(org, "succeeded")).toEqual([Number(delivery.id)]);
    // Settled again: the next turn raises the floor past it once more.
    await retentionTurn();
    expect((await claimFloor()).getTime()).toBeGreaterThan(delivery.created_at.getTime());
  });

  it("a replay not yet committed when the retention's turn starts: the turn waits for it, and leaves the floor at or below it", async () => {
    const org = await organizationTenDaysBack("Racing Replay Caterers");
    await claimed(org, "succeeded");
    const delivery = await deliveryOf(org);
    await retentionTurn();
    expect((await claimFloor()).getTime()).toBeGreaterThan(delivery.created_at.getTime());

    // The replay's transaction stays open (its statement done, the floor's row locked) until `commit` is called.
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const replay = db.run(inOneTransaction(Effect.andThen(
      DeliveryRepository.use((r) => r.retry(org.scope, Number(delivery.id))),
      (result) => Effect.as(Effect.promise(() => committing), result),
    )));
    await until(`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and state = 'idle in transaction' and query like 'with changed as (update webhook_deliveries %'`);
    const turn = retentionTurn();
    // The turn waits for the floor's row: had it read the deliveries first, it would have missed the replayed one.
    await until("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and state = 'active'");
    commit();
    expect(await replay).toEqual({ retried: 1 });
    await turn;
    expect((await claimFloor()).getTime()).toBeLessThanOrEqual(delivery.created_at.getTime());
    expect(await claimed(org, "succeeded")).toEqual([Number(delivery.id)]);
  });

  it("a delivery waiting for its retry, 10 days back: the retention's turn keeps the floor at or below it, and it is claimed", async () => {
    const org = await organizationTenDaysBack("Retried Caterers");
    // Its first try failed; its next one is due at once (`retryingDeliveryPolicy`): pending, with an attempt.
    expect(await claimed(org, "failed", retryingDeliveryPolicy)).toHaveLength(1);
    const delivery = await deliveryOf(org);
    expect(delivery.status).toBe("pending");

    await retentionTurn();
    expect((await claimFloor()).getTime()).toBeLessThanOrEqual(delivery.created_at.getTime());
    expect(await claimed(org, "succeeded")).toEqual([Number(delivery.id)]);
  });

  it("a delivery written by a transaction still open while the floor rose: the floor stays at or below its time, and it is claimed", async () => {
    const org = await createOrganization(db, "Slow Writer Caterers");
    await db.run(Effect.gen(function* () {
      yield* (yield* WebhookEndpointRepository).add(org.scope, `https://198.51.100.9/${org.id}`, [], generateSigningSecret());
    }));
    const [endpoint] = await rows<{ id: string }>("select id from webhook_endpoints where organization_id = ?", [org.id]);
    await withRawClient(db.url, async (client) => {
      await client.query("begin");
      try {
        // Written at its transaction's start (`now()`), committed only after the retention's turn.
        const { rows: [message] } = await client.query<{ id: string; created_at: Date }>(
          "insert into webhook_messages (organization_id, type, payload) values ($1, 'client.created', '{}') returning id, created_at", [org.id]);
        await client.query("insert into webhook_deliveries (organization_id, endpoint_id, message_id) values ($1, $2, $3)", [org.id, endpoint!.id, message!.id]);
        await retentionTurn();
        expect((await claimFloor()).getTime()).toBeLessThanOrEqual(new Date(message!.created_at).getTime());
        await client.query("commit");
      } catch (error) {
        await client.query("rollback");
        throw error;
      }
    });
    expect(await claimed(org, "succeeded")).toHaveLength(1);
  });
});
