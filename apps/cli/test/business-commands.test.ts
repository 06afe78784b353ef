import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCliFailing, runCliJson } from "./cli-process.ts";

/**
 * `platter invoice send|pay`, `proposal approve`, `inquiry receive` as real processes: each changes
 * state and writes its outbox row together, and a refused one writes neither. Checked in SQL.
 */

let db: TestDatabase;
let env: Record<string, string>;
let org: number;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  env = { DATABASE_URL: db.url };
  org = (await createOrganization(db, "Business Events Test", "EUR")).id;
});
afterAll(() => db?.dispose());

const rows = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);

const countOf = async (table: string): Promise<number> =>
  (await rows<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;

interface OutboxRow {
  type: string;
  payload: { version: number; data: Record<string, unknown> };
}

/** The outbox rows of one record, by the `id` their payload carries. */
const outboxOf = (type: string, id: number) =>
  rows<OutboxRow>("select type, payload from webhook_messages where type = ? and (payload->'data'->>'id')::bigint = ?", [type, id]);

let invoiceNumbers = 0;

/**
 * An invoice in `status` with two lines: 2 × 12.50 at 20 % tax and 1 × 40.00 untaxed, so a total
 * of 25.00 + 5.00 + 40.00 = 70.00 EUR.
 */
const insertInvoice = async (status: "draft" | "sent" | "paid" | "void", amountPaidMinor = 0) => {
  const number = `INV-2027-${String(++invoiceNumbers).padStart(4, "0")}`;
  const [invoice] = await rows<{ id: number }>(
    `insert into invoices (organization_id, number, status, currency, issue_date, due_date, amount_paid_minor)
     values (?, ?, ?, 'EUR', '2027-03-01', '2027-03-31', ?) returning id::int`,
    [org, number, status, amountPaidMinor],
  );
  await rows(
    `insert into invoice_line_items
       (organization_id, invoice_id, position, description, quantity_milli, unit_price_minor, tax_rate_basis_points)
     values (?, ?, 1, 'Canapés', 2000, 1250, 2000), (?, ?, 2, 'Delivery', 1000, 4000, 0)`,
    [org, invoice!.id, org, invoice!.id],
  );
  return { id: invoice!.id, number };
};
const INVOICE_TOTAL_MINOR = 7000;

const invoiceState = async (id: number) =>
  (await rows<{ status: string; amount_paid_minor: number }>(
    "select status, amount_paid_minor::int from invoices where id = ?",
    [id],
  ))[0];

const insertProposal = async (title: string, status: "draft" | "sent" = "sent") => {
  const [event] = await rows<{ id: number }>(
    "insert into events (organization_id, name, status) values (?, 'Summer Party', 'proposed') returning id::int",
    [org],
  );
  const [proposal] = await rows<{ id: number }>(
    "insert into proposals (organization_id, event_id, title, status, total_minor) values (?, ?, ?, ?, 250000) returning id::int",
    [org, event!.id, title, status],
  );
  return { id: proposal!.id, eventId: event!.id };
};

describe("platter invoice send", () => {
  it("marks a draft invoice sent and records invoice.sent naming it by its number", async () => {
    const invoice = await insertInvoice("draft");
    expect(await runCliJson(["invoice", "send", "--id", String(invoice.id)], env)).toEqual({ id: invoice.id, status: "sent" });
    expect(await invoiceState(invoice.id)).toEqual({ status: "sent", amount_paid_minor: 0 });
    const outbox = await outboxOf("invoice.sent", invoice.id);
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.payload).toMatchObject({
      version: 1,
      data: { id: invoice.id, name: invoice.number, number: invoice.number, status: "sent", total: 70, balance_due: 70 },
    });
  });

  it("fails with exit 1 for a paid invoice, which stays paid, and records nothing", async () => {
    const invoice = await insertInvoice("paid", INVOICE_TOTAL_MINOR);
    const result = await runCliFailing(["invoice", "send", "--id", String(invoice.id)], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("from paid to sent");
    expect(await invoiceState(invoice.id)).toEqual({ status: "paid", amount_paid_minor: INVOICE_TOTAL_MINOR });
    expect(await outboxOf("invoice.sent", invoice.id)).toEqual([]);
  });
});

describe("platter invoice pay", () => {
  it("marks a sent invoice paid in full and records invoice.paid", async () => {
    const invoice = await insertInvoice("sent");
    expect(await runCliJson(["invoice", "pay", "--id", String(invoice.id)], env)).toEqual({ id: invoice.id, status: "paid" });
    expect(await invoiceState(invoice.id)).toEqual({ status: "paid", amount_paid_minor: INVOICE_TOTAL_MINOR });
    const outbox = await outboxOf("invoice.paid", invoice.id);
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.payload.data).toMatchObject({
      id: invoice.id, name: invoice.number, status: "paid", total: 70, amount_paid: 70, balance_due: 0,
    });
  });

  it("fails with exit 1 for a void invoice, which stays void, and records nothing", async () => {
    const invoice = await insertInvoice("void");
    const outboxBefore = await countOf("webhook_messages");
    const result = await runCliFailing(["invoice", "pay", "--id", String(invoice.id)], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("from void to paid");
    expect(await invoiceState(invoice.id)).toEqual({ status: "void", amount_paid_minor: 0 });
    expect(await countOf("webhook_messages")).toBe(outboxBefore);
  });
});

describe("platter proposal approve", () => {
  it("approves a proposal and records proposal.approved naming it by its title", async () => {
    const proposal = await insertProposal("Garden party, menu B");
    expect(await runCliJson(["proposal", "approve", "--id", String(proposal.id)], env)).toEqual({
      id: proposal.id,
      status: "approved",
    });
    const [stored] = await rows<{ status: string; approved: boolean }>(
      "select status, approved_at is not null as approved from proposals where id = ?",
      [proposal.id],
    );
    expect(stored).toEqual({ status: "approved", approved: true });
    const outbox = await outboxOf("proposal.approved", proposal.id);
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.payload.data).toMatchObject({
      id: proposal.id, name: "Garden party, menu B", status: "approved", event_id: proposal.eventId, total: 2500, currency: "EUR",
    });
  });

  it("fails with exit 1 when approving a second time, and records no second event", async () => {
    const proposal = await insertProposal("Wedding buffet", "draft");
    await runCliJson(["proposal", "approve", "--id", String(proposal.id)], env);
    const result = await runCliFailing(["proposal", "approve", "--id", String(proposal.id)], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("from approved to approved");
    expect(await outboxOf("proposal.approved", proposal.id)).toHaveLength(1);
  });
});

describe("an unknown record id", () => {
  it.each([
    { command: "invoice send", message: "invoice 999999 does not exist" },
    { command: "invoice pay", message: "invoice 999999 does not exist" },
    { command: "proposal approve", message: "proposal 999999 does not exist" },
  ])("fails `$command` with exit 1 and records nothing", async ({ command, message }) => {
    const outboxBefore = await countOf("webhook_messages");
    const result = await runCliFailing([...command.split(" "), "--id", "999999"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(await countOf("webhook_messages")).toBe(outboxBefore);
  });
});

describe("platter inquiry receive", () => {
  const written = async () => ({
    clients: await countOf("clients"),
    events: await countOf("events"),
    outbox: await countOf("webhook_messages"),
  });

  it("records the requester as a client, the request as an inquiry event, and event.inquiry", async () => {
    const received = await runCliJson(
      [
        "inquiry", "receive", "--org", String(org), "--name", "Grace", "--email", "g@example.com", "--guests", "40",
        "--event-date", "2027-05-01",
      ],
      env,
    );
    expect(received).toEqual({ id: expect.any(Number), client_id: expect.any(Number) });
    expect(await rows("select organization_id::int, name, email from clients where id = ?", [received.client_id])).toEqual([
      { organization_id: org, name: "Grace", email: "g@example.com" },
    ]);
    expect(
      await rows("select organization_id::int, client_id::int, status, guests, event_date::text from events where id = ?", [
        received.id,
      ]),
    ).toEqual([{ organization_id: org, client_id: received.client_id, status: "inquiry", guests: 40, event_date: "2027-05-01" }]);
    const outbox = await outboxOf("event.inquiry", received.id);
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.payload.data).toMatchObject({
      id: received.id, name: expect.stringContaining("Grace"), status: "inquiry", client_id: received.client_id, guests: 40,
      event_date: "2027-05-01",
    });
  });

  it.each([
    {
      what: "a date that does not exist",
      args: ["--event-date", "2027-02-30"],
      message: "event_date must be a calendar date written YYYY-MM-DD",
    },
    { what: "zero guests", args: ["--guests", "0"], message: '--guests must be a positive integer, got "0"' },
  ])("refuses $what with exit 2 and writes nothing", async ({ args, message }) => {
    const before = await written();
    const result = await runCliFailing(["inquiry", "receive", "--org", String(org), "--name", "Grace", ...args], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(await written()).toEqual(before);
  });

  it("fails with exit 1 for an unknown organization and writes nothing", async () => {
    const before = await written();
    const result = await runCliFailing(["inquiry", "receive", "--org", "999999", "--name", "Grace"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("organization 999999 does not exist");
    expect(await written()).toEqual(before);
  });
});
