import { generateSigningSecret } from "@platter/domain";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { deliveryWaker } from "../src/webhooks/delivery-listener.ts";
import { inOneTransaction, WebhookEndpointRepository } from "../src/index.ts";
import { createClient } from "./created-records.ts";

/**
 * How a dispatcher hears of new deliveries: the writer NOTIFYs platter_deliveries after its
 * transaction commits, never inside it (a notifying transaction's commit holds a lock per database
 * until its flush, and would queue every other create's commit behind it), coalesced per process.
 */

let db: TestDatabase;
let org: OrganizationFixture;
let listener: pg.Client;
const heard: Array<{ at: number }> = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db);
  await db.run(WebhookEndpointRepository.use((e) => e.add(org.scope, "https://example.com/hook", [], generateSigningSecret())));
  listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  listener.on("notification", (message) => {
    if (message.channel === "platter_deliveries") heard.push({ at: Date.now() });
  });
  await listener.query("listen platter_deliveries");
});
afterAll(async () => {
  await listener?.end();
  await db?.dispose();
});

const waitForNotifications = async (count: number) => {
  const deadline = Date.now() + 10_000;
  while (heard.length < count && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20));
};

describe("waking the dispatchers", () => {
  it("no trigger NOTIFYs inside the transaction writing deliveries: one NOTIFY comes after its commit", async () => {
    const [triggers] = await db.orm.em.getConnection().execute<Array<{ n: number }>>(
      "select count(*)::int as n from pg_trigger where tgrelid = 'webhook_deliveries'::regclass and not tgisinternal",
    );
    expect(triggers!.n).toBe(0);
    heard.length = 0;
    await db.run(createClient(org.scope, { name: "Ada" }));
    await waitForNotifications(1);
    expect(heard.length).toBe(1);
  });

  it("a transaction rolled back wakes no one", async () => {
    heard.length = 0;
    const failed = await db.run(Effect.flip(inOneTransaction(Effect.flatMap(createClient(org.scope, { name: "Rolled back" }), () => Effect.fail("abandoned" as const)))));
    expect(failed).toBe("abandoned");
    await new Promise((done) => setTimeout(done, 500));
    expect(heard).toEqual([]);
  });

  it("a burst of creates wakes with at most as many NOTIFYs, the last after the last commit", async () => {
    heard.length = 0;
    const committed: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, n) => db.run(createClient(org.scope, { name: `Burst ${n}` })).then(() => committed.push(Date.now()))));
    await waitForNotifications(1);
    await new Promise((done) => setTimeout(done, 500));
    expect(heard.length).toBeGreaterThan(0);
    expect(heard.length).toBeLessThanOrEqual(20);
    expect(Math.max(...heard.map((h) => h.at))).toBeGreaterThanOrEqual(Math.max(...committed));
  });
});

describe("deliveryWaker (the coalescing)", () => {
  it("sends one NOTIFY for the first wake and one more for every wake asked while it was in flight", async () => {
    const sent: Array<() => void> = [];
    const wake = deliveryWaker(() => new Promise<void>((done) => sent.push(done)));
    for (let n = 0; n < 100; n++) wake();
    expect(sent).toHaveLength(1);
    sent[0]!();
    await new Promise((done) => setTimeout(done, 0));
    expect(sent).toHaveLength(2);
    sent[1]!();
    await new Promise((done) => setTimeout(done, 0));
    expect(sent).toHaveLength(2);
    wake();
    expect(sent).toHaveLength(3);
  });

  it("a NOTIFY that fails is tried again (a pooled connection the server closed), at most three times, and does not stop the next wake", async () => {
    let calls = 0;
    const wake = deliveryWaker(() => (++calls <= 1 ? Promise.reject(new Error("connection lost")) : Promise.resolve()));
    wake();
    await new Promise((done) => setTimeout(done, 500));
    expect(calls).toBe(2);
    const failing = deliveryWaker(() => (++calls, Promise.reject(new Error("database away"))));
    calls = 0;
    failing();
    await new Promise((done) => setTimeout(done, 1_000));
    expect(calls).toBe(3);
    failing();
    await new Promise((done) => setTimeout(done, 1_000));
    expect(calls).toBe(6);
  });
});
