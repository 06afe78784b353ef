import { type Actor, generateSigningSecret, operatorActor, WEBHOOK_EVENT_TYPES } from "@platter/domain";
import { type Persistence, Sandboxes, WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Sandbox } from "../src/index.ts";

/**
 * The Sandbox service as the operator's CLI calls it: creating is audited in the live organization;
 * each of the six triggers writes exactly one message of its type (and its delivery) in the sandbox
 * and nothing in the live organization; a live organization is refused and nothing is written;
 * when the demo data has nothing left to act on, the refusal says to reset, and a reset makes more.
 */

let db: TestDatabase;
let live: OrganizationFixture;
let liveOperator: Actor;
let sandboxOperator: Actor;
let sandboxId: number;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  live = await createOrganization(db, "Garden Kitchen");
  liveOperator = operatorActor(live.scope, "root via the CLI");
  sandboxId = (await db.run(Sandbox.create(liveOperator))).id;
  sandboxOperator = operatorActor(await db.run(Sandboxes.use((s) => s.linkedScope(live.scope))), "root via the CLI");
  for (const scope of [live.scope, sandboxOperator.scope]) {
    await db.run(WebhookEndpointRepository.use((endpoints) => endpoints.add(scope, `https://org-${scope.organizationId}.example/hook`, [], generateSigningSecret())));
  }
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const failureOf = <E>(program: Effect.Effect<unknown, E, Persistence>) => db.run(Effect.flip(program));
/** Messages of organization `id` by type, with their deliveries. */
const messagesOf = (id: number) =>
  rows<{ type: string; deliveries: number }>(
    `select m.type, (select count(*)::int from webhook_deliveries d where d.message_id = m.id) as deliveries
     from webhook_messages m where m.organization_id = ? order by m.id`,
    [id],
  );
/** Everything a change could write in organization `id`. */
const written = async (id: number) =>
  (await rows<Record<string, number>>(
    `select ${["clients", "events", "invoices", "proposals", "webhook_messages", "webhook_deliveries", "audit_log"]
      .map((table) => `(select count(*)::int from ${table} where organization_id = ?) as ${table}`).join(", ")}`,
    Array.from({ length: 7 }, () => id),
  ))[0]!;

describe("the Sandbox service", () => {
  it("audits creating the sandbox in the live organization, once", async () => {
    expect(await db.run(Sandbox.create(liveOperator))).toEqual({ id: sandboxId, created: false });
    expect(await rows("select action, subject, operator from audit_log where organization_id = ? and action like 'sandbox.%'", [live.id]))
      .toEqual([{ action: "sandbox.created", subject: `organization ${sandboxId}`, operator: "root via the CLI" }]);
  });

  it.each(WEBHOOK_EVENT_TYPES)("makes %s happen in the sandbox: one message of its type, delivered, and nothing in the live organization", async (type) => {
    const liveBefore = await written(live.id);
    const before = await messagesOf(sandboxId);
    const triggered = await db.run(Sandbox.trigger(sandboxOperator, type));
    expect(triggered.type).toBe(type);
    expect(await messagesOf(sandboxId)).toEqual([...before, { type, deliveries: 1 }]);
    expect(await written(live.id)).toEqual(liveBefore);
    const [audit] = await rows<{ action: string; subject: string }>(
      "select action, subject from audit_log where organization_id = ? order by id desc limit 1", [sandboxId],
    );
    expect(audit).toEqual({ action: "sandbox.triggered", subject: `${triggered.subject} (${type})` });
  });

  it.each(WEBHOOK_EVENT_TYPES)("refuses to trigger %s in a live organization and writes nothing", async (type) => {
    const before = await written(live.id);
    expect(await failureOf(Sandbox.trigger(liveOperator, type))).toMatchObject({ _tag: "InvalidTransition", message: expect.stringContaining("not a sandbox") });
    expect(await written(live.id)).toEqual(before);
  });

  it("refuses to reset a live organization and writes nothing", async () => {
    const before = await written(live.id);
    expect(await failureOf(Sandbox.reset(liveOperator))).toMatchObject({ _tag: "InvalidTransition" });
    expect(await written(live.id)).toEqual(before);
  });

  it("says to reset when no draft invoice is left to send, and a reset (audited) makes more", async () => {
    // Send every draft left, then one more.
    for (;;) {
      const next = await db.run(Sandboxes.use((s) => s.target(sandboxOperator.scope, "draft_invoice")));
      if (next === undefined) break;
      await db.run(Sandbox.trigger(sandboxOperator, "invoice.sent"));
    }
    const before = await written(sandboxId);
    expect(await failureOf(Sandbox.trigger(sandboxOperator, "invoice.sent"))).toEqual(expect.objectContaining({
      _tag: "InvalidTransition", message: "The sandbox has no draft invoice left to send. Reset the sandbox's data to make more.",
    }));
    expect(await written(sandboxId)).toEqual(before);
    await db.run(Sandbox.reset(sandboxOperator));
    expect((await db.run(Sandbox.trigger(sandboxOperator, "invoice.sent"))).subject).toMatch(/^invoice \d+$/);
    expect(await rows("select action from audit_log where organization_id = ? and action = 'sandbox.reset'", [sandboxId])).toEqual([{ action: "sandbox.reset" }]);
  });
});
