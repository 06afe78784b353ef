import { type Actor, apiKeyActor, operatorActor } from "@platter/domain";
import { type Persistence } from "@platter/persistence";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { Effect, Exit } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiKeys, Clients, Deliveries, WebhookEndpoints } from "../src/index.ts";

/**
 * The application services as the operator's CLI calls them (the Developer area's sessions are
 * tested through its pages): each change and its audit row commit together, a refused change
 * writes neither, and the SSRF guard is the service's, not its callers'.
 */

let db: TestDatabase;
let org: OrganizationFixture;
let operator: Actor;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db);
  operator = operatorActor(org.scope, "root via the CLI");
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const auditOf = (subject: string) =>
  rows<{ action: string; operator: string | null; session_id: string | null; organization_id: string }>(
    "select action, operator, session_id, organization_id from audit_log where subject = ? order by id", [subject],
  );
/** The expected failure `program` ends with. */
const failureOf = <E>(program: Effect.Effect<unknown, E, Persistence>) => db.run(Effect.flip(program));
/** Whether `program` failed, expected failure or defect. */
const failed = async (program: Effect.Effect<unknown, unknown, Persistence>) => Exit.isFailure(await db.run(Effect.exit(program)));

const SETTINGS = { allowPrivateNetworks: false, secretOverlapMs: 60_000, endpointsPerOrganization: 50 } as const;
const PUBLIC_URL = "https://198.51.100.51/hook";

/** Everything a change could write. */
const state = async () =>
  (await rows<Record<string, number>>(
    `select (select count(*)::int from api_keys where organization_id = ?) as keys,
       (select count(*)::int from webhook_endpoints where organization_id = ?) as endpoints,
       (select count(*)::int from audit_log where organization_id = ?) as audit`,
    [org.id, org.id, org.id],
  ))[0];

describe("the operator's changes are audited", () => {
  it("records creating and revoking a key as the operator's, and a second revoke not at all", async () => {
    const key = await db.run(ApiKeys.create(operator, "read", "Kitchen display"));
    await db.run(ApiKeys.revoke(operator, key.id));
    await db.run(ApiKeys.revoke(operator, key.id));
    const entry = { operator: "root via the CLI", session_id: null, organization_id: String(org.id) };
    expect(await auditOf(`api_key ${key.id}`)).toEqual([
      { action: "api_key.created", ...entry },
      { action: "api_key.revoked", ...entry },
    ]);
    expect((await db.run(ApiKeys.find(operator, key.id))).revoked_at).not.toBeNull();
  });

  it("records registering an endpoint, revealing and rotating its secret, and disabling it", async () => {
    const endpoint = await db.run(WebhookEndpoints.register(operator, PUBLIC_URL, [], SETTINGS));
    const revealed = await db.run(WebhookEndpoints.revealSecret(operator, endpoint.id));
    const rotated = await db.run(WebhookEndpoints.rotateSecret(operator, endpoint.id, SETTINGS));
    await db.run(WebhookEndpoints.setEnabled(operator, endpoint.id, false, "disabled by the operator"));
    expect(revealed.secret).toBe(endpoint.secret);
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect((await auditOf(`webhook_endpoint ${endpoint.id}`)).map((row) => row.action)).toEqual([
      "webhook_endpoint.added", "webhook_endpoint.secret_revealed", "webhook_endpoint.secret_rotated", "webhook_endpoint.disabled",
    ]);
  });
});

describe("a refused change writes nothing", () => {
  it.each([
    ["loopback", "http://127.0.0.1:9/hook", "Webhooks are sent only to public internet addresses, and 127.0.0.1 is not allowed."],
    ["a name resolving to loopback", "http://localhost:9/hook", "Webhooks are sent only to public internet addresses, and localhost has none: check the URL's host name."],
    ["cloud metadata", "http://169.254.169.254/latest", "Webhooks are sent only to public internet addresses, and 169.254.169.254 is not allowed."],
  ])("the SSRF guard refuses %s: no endpoint, no audit row", async (_name, url, message) => {
    const before = await state();
    expect(await failureOf(WebhookEndpoints.register(operator, url, [], SETTINGS))).toMatchObject({ _tag: "EndpointUrlRefused", message });
    expect(await state()).toEqual(before);
  });

  it("refuses a URL that is not one before any look-up", async () => {
    const before = await state();
    expect(await failureOf(WebhookEndpoints.register(operator, "ftp://example.com/hook", [], SETTINGS))).toMatchObject({ _tag: "InvalidInput" });
    expect(await failureOf(WebhookEndpoints.register(operator, " ", [], SETTINGS))).toMatchObject({ _tag: "InvalidInput" });
    expect(await state()).toEqual(before);
  });

  it("refuses an endpoint beyond the organization's limit", async () => {
    const before = await state();
    const limited = { ...SETTINGS, endpointsPerOrganization: before!["endpoints"]! };
    expect(await failureOf(WebhookEndpoints.register(operator, PUBLIC_URL, [], limited))).toMatchObject({ _tag: "EndpointLimitReached" });
    expect(await state()).toEqual(before);
  });

  it("leaves the change undone when its audit row cannot be written", async () => {
    const before = await state();
    await rows(`create function refuse_audit() returns trigger language plpgsql as $$ begin raise exception 'audit log refused'; end $$;
      create trigger refuse_audit before insert on audit_log for each row execute function refuse_audit()`);
    try {
      expect(await failed(ApiKeys.create(operator, "read_write"))).toBe(true);
      expect(await failed(WebhookEndpoints.register(operator, PUBLIC_URL, [], SETTINGS))).toBe(true);
    } finally {
      await rows("drop trigger refuse_audit on audit_log; drop function refuse_audit()");
    }
    expect(await state()).toEqual(before);
  });

  it("the audit log names exactly one actor", async () => {
    await expect(rows(
      "insert into audit_log (organization_id, action, subject, at) values (?, 'api_key.created', 'api_key 1', now())", [org.id],
    )).rejects.toThrow(/audit_log_actor_check/);
  });
});

describe("replays", () => {
  it("replays a finished delivery as the operator's, refuses it under another message, and records nothing when nothing changed", async () => {
    const endpoint = await db.run(WebhookEndpoints.register(operator, "https://198.51.100.52/hook", ["client.created"], SETTINGS));
    await db.run(Clients.create(apiKeyActor(org.scope), { name: "Replayed" }));
    const [delivery] = await rows<{ id: string; envelope_id: string }>(
      `select d.id, m.envelope_id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
       where d.endpoint_id = ? order by d.id desc limit 1`, [endpoint.id],
    );
    const id = Number(delivery!.id);
    await rows("update webhook_deliveries set status = 'failed', completed_at = now() where id = ?", [id]);

    expect(await failureOf(Deliveries.replay(operator, id, "evt_someothermessage"))).toMatchObject({ _tag: "NotFound" });
    expect(await db.run(Deliveries.replay(operator, id, delivery!.envelope_id))).toEqual({ retried: 1 });
    // Now due: replaying it again changes nothing, and says so without an audit row.
    expect(await db.run(Deliveries.replay(operator, id))).toEqual({ retried: 0 });
    expect(await auditOf(`delivery ${id} of message ${delivery!.envelope_id}`)).toEqual([
      { action: "delivery.replayed", operator: "root via the CLI", session_id: null, organization_id: String(org.id) },
    ]);
  });
});
