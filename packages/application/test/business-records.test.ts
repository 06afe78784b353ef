import { apiKeyActor, type EventCreate, operatorActor } from "@platter/domain";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { BusinessActions, Clients, Events } from "../src/index.ts";

/**
 * The API's creates and the business actions as use cases: each writes its record and its webhook
 * message in one transaction, no audit row (the message is their record), and a refused one
 * writes nothing. (The API's and the CLI's tests run them end to end.)
 */

let db: TestDatabase;
let org: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db);
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
/** How many rows each table a create or an action writes holds for the organization. */
const counts = async () =>
  (await rows<Record<string, number>>(
    `select (select count(*)::int from clients where organization_id = ?) as clients,
            (select count(*)::int from events where organization_id = ?) as events,
            (select count(*)::int from webhook_messages where organization_id = ?) as messages,
            (select count(*)::int from idempotency_keys where organization_id = ?) as idempotency_keys,
            (select count(*)::int from audit_log where organization_id = ?) as audit_rows`,
    [org.id, org.id, org.id, org.id, org.id],
  ))[0]!;
const messageOf = async (type: string, id: number) =>
  rows<{ payload: { data: Record<string, unknown> } }>(
    "select payload from webhook_messages where organization_id = ? and type = ? and (payload->'data'->>'id')::bigint = ?", [org.id, type, id],
  );

describe("the API's creates", () => {
  it("writes a client and its client.created message together, and no audit row", async () => {
    const before = await counts();
    const created = await db.run(Clients.create(apiKeyActor(org.scope), { name: "Ada's Bakery", email: "ada@example.com" }));
    expect(created.replayed).toBe(false);
    expect(await messageOf("client.created", created.id)).toMatchObject([{ payload: { data: { id: created.id, name: "Ada's Bakery", email: "ada@example.com" } } }]);
    expect(await counts()).toEqual({ ...before, clients: before.clients! + 1, messages: before.messages! + 1 });
  });

  it("stores an event's price per head exactly and carries it in event.created", async () => {
    const { id } = await db.run(Events.create(apiKeyActor(org.scope), { name: "Gala", price_per_head: 42.1, guests: 80 }));
    expect(await messageOf("event.created", id)).toMatchObject([{ payload: { data: { id, price_per_head: 42.1, currency: "EUR", status: "inquiry" } } }]);
  });

  it.each<[string, EventCreate]>([
    ["three decimals in EUR", { name: "Gala", price_per_head: 10.005 }],
    ["a thousandth", { name: "Gala", price_per_head: 0.001 }],
  ])("refuses a price with more decimals than the currency has (%s), writing nothing", async (_, input) => {
    const before = await counts();
    const failure = await db.run(Effect.flip(Events.create(apiKeyActor(org.scope), input)));
    expect(failure).toMatchObject({ _tag: "InvalidInput", message: expect.stringContaining("price_per_head") });
    expect(await counts()).toEqual(before);
  });

  it("creates once per Idempotency-Key: a repeat replays the first id, another body is refused, neither writes", async () => {
    const idempotency = { key: "order-1", fingerprint: "body-1" };
    const first = await db.run(Clients.create(apiKeyActor(org.scope), { name: "Once" }, idempotency));
    const after = await counts();
    expect(await db.run(Clients.create(apiKeyActor(org.scope), { name: "Once" }, idempotency))).toEqual({ id: first.id, replayed: true });
    expect(await db.run(Effect.flip(Clients.create(apiKeyActor(org.scope), { name: "Other" }, { key: "order-1", fingerprint: "body-2" }))))
      .toMatchObject({ _tag: "IdempotencyKeyReused" });
    expect(await counts()).toEqual(after);
  });
});

describe("business actions", () => {
  const operator = () => operatorActor(org.scope, "root via the CLI");

  it("receives an inquiry as a client and an event with its event.inquiry message, and no audit row", async () => {
    const before = await counts();
    const received = await db.run(BusinessActions.receiveInquiry(operator(), { name: "Grace", email: "grace@example.com", guests: 12 }));
    expect(await messageOf("event.inquiry", received.id)).toMatchObject([
      { payload: { data: { id: received.id, name: "Inquiry from Grace", client_id: received.client_id, guests: 12 } } },
    ]);
    expect(await counts()).toEqual({ ...before, clients: before.clients! + 1, events: before.events! + 1, messages: before.messages! + 1 });
  });

  it("sends, then pays an invoice in full, each with its message; a move the invoice cannot make writes nothing", async () => {
    const [invoice] = await rows<{ id: number }>(
      `insert into invoices (organization_id, number, status, currency, issue_date, due_date)
       values (?, 'INV-1', 'draft', 'EUR', '2027-03-01', '2027-03-31') returning id::int`, [org.id],
    );
    const id = invoice!.id;
    await rows(
      `insert into invoice_line_items (organization_id, invoice_id, position, description, quantity_milli, unit_price_minor, tax_rate_basis_points)
       values (?, ?, 1, 'Canapés', 2000, 1250, 2000)`, [org.id, id],
    );
    expect(await db.run(BusinessActions.sendInvoice(operator(), id))).toEqual({ id, status: "sent" });
    const before = await counts();
    expect(await db.run(Effect.flip(BusinessActions.sendInvoice(operator(), id)))).toMatchObject({ _tag: "InvalidTransition" });
    expect(await counts()).toEqual(before);
    expect(await db.run(BusinessActions.payInvoice(operator(), id))).toEqual({ id, status: "paid" });
    expect(await messageOf("invoice.paid", id)).toMatchObject([{ payload: { data: { id, name: "INV-1", amount_paid: 30, balance_due: 0 } } }]);
    expect((await counts()).audit_rows).toBe(before.audit_rows);
  });
});
