import { generateSigningSecret, WEBHOOK_EVENT_TYPES } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { Effect } from "effect";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { cookiePair, formTokenIn, postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * The Sandbox page over HTTP: a live session creates its sandbox (audited) and switches this browser
 * to a session of it; every page of the sandbox session carries the Sandbox marker and the live
 * organization's never does; in the sandbox each event type's button makes it happen for real, so a
 * registered endpoint gets a delivery; a bad type is a 400 and a live session's trigger a 409, both
 * writing nothing; a reset asks first, then replaces only the sandbox's business data.
 */

const PAGES = ["/api-keys", "/requests", "/webhooks", "/deliveries", "/event-catalog", "/api-reference", "/sessions", "/audit-log", "/sandbox"];
const BANNER = '<div class="sandbox-banner" role="note"><strong>Sandbox</strong>';
const BADGE = '<span class="badge badge-sandbox">Sandbox</span>';

let area: RunningArea;
let live: OrganizationFixture;
let liveSession: TestSession;
let sandboxSession: TestSession;
let sandboxId: number;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  live = await createOrganization(area.db, "Lakeside Catering");
  liveSession = await signIn(area, await area.link(live.id));
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const get = (session: TestSession, path: string) => fetch(area.origin + path, { redirect: "manual", headers: { cookie: session.cookie } });
const post = (session: TestSession, path: string, fields: Record<string, string> = {}) =>
  postForm(area, path, { form_token: session.formToken, ...fields }, { cookie: session.cookie });
/** Everything a trigger or a reset could write in organization `id`. */
const written = async (id: number) =>
  (await rows<Record<string, number>>(
    `select ${["clients", "events", "invoices", "proposals", "webhook_messages", "webhook_deliveries", "audit_log"]
      .map((table) => `(select count(*)::int from ${table} where organization_id = ?) as ${table}`).join(", ")}`,
    Array.from({ length: 7 }, () => id),
  ))[0]!;
/** Switches the browser of `session` to the other organization: the new session, from the answer's cookie. */
const switchFrom = async (session: TestSession): Promise<TestSession> => {
  const switched = await post(session, "/sandbox/switch");
  expect(switched.status).toBe(303);
  expect(switched.headers.get("location")).toBe("/sandbox");
  const cookie = cookiePair(switched.headers.get("set-cookie")!);
  const page = await fetch(`${area.origin}/sandbox`, { headers: { cookie } });
  expect(page.status).toBe(200);
  return { cookie, formToken: formTokenIn(await page.text()) };
};

describe("the Sandbox page", () => {
  it("offers a live session to create the sandbox, and creating it is audited in the live organization", async () => {
    const before = await get(liveSession, "/sandbox");
    expect(before.status).toBe(200);
    const page = await before.text();
    expect(page).toContain('<a href="/sandbox" aria-current="page">Sandbox</a>');
    expect(page).toContain("Create sandbox");
    expect(page).not.toContain(BANNER);
    const created = await post(liveSession, "/sandbox/create");
    expect(created.status).toBe(303);
    expect(created.headers.get("location")).toBe("/sandbox?created=1");
    const [row] = await rows<{ id: string }>("select id from organizations where sandbox_of = ?", [live.id]);
    sandboxId = Number(row!.id);
    expect(await rows("select action, subject from audit_log where organization_id = ? and action like 'sandbox.%'", [live.id]))
      .toEqual([{ action: "sandbox.created", subject: `organization ${sandboxId}` }]);
    const after = await get(liveSession, "/sandbox?created=1");
    expect(after.status).toBe(200);
    const shown = await after.text();
    expect(shown).toContain("Your sandbox is ready");
    expect(shown).toContain("Open sandbox");
    expect(shown).toContain("Lakeside Catering (sandbox)");
  });

  it.each(WEBHOOK_EVENT_TYPES)("refuses %s from a live session with 409, writing nothing", async (type) => {
    const before = await written(live.id);
    const refused = await post(liveSession, "/sandbox/trigger", { type });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("This organization is not a sandbox");
    expect(await written(live.id)).toEqual(before);
  });

  it("refuses a live session's reset with 409 and sends its confirmation page back to the Sandbox page", async () => {
    const before = await written(live.id);
    expect((await post(liveSession, "/sandbox/reset")).status).toBe(409);
    expect(await written(live.id)).toEqual(before);
    const confirm = await get(liveSession, "/sandbox/reset");
    expect(confirm.status).toBe(303);
    expect(confirm.headers.get("location")).toBe("/sandbox");
  });

  it("switches this browser to a session of the sandbox, ending the live one", async () => {
    sandboxSession = await switchFrom(liveSession);
    expect((await get(liveSession, "/api-keys")).status).toBe(401);
    expect(await rows("select organization_id from developer_sessions where ended_at is null order by id")).toEqual([{ organization_id: String(sandboxId) }]);
  });

  it.each(PAGES)("marks %s of a sandbox session with the Sandbox banner and badge", async (path) => {
    const response = await get(sandboxSession, path);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain(BANNER);
    expect(page).toContain(BADGE);
    expect(page).toContain("Lakeside Catering (sandbox)");
    // The marker's styles are our own too: no inline style, no other origin.
    expect([...page.matchAll(/<link\b[^>]*>/g)].map((m) => m[0])).toEqual([
      '<link rel="stylesheet" href="/assets/developer-area.css">', '<link rel="stylesheet" href="/assets/sandbox.css">',
    ]);
    expect(page).not.toMatch(/\son\w+=|style=/);
  });

  it("makes the sandbox's keys platter_test_ keys", async () => {
    const created = await post(sandboxSession, "/api-keys", { name: "Sandbox integration", access: "read_write", expires: "never" });
    expect(created.status).toBe(201);
    expect(await created.text()).toMatch(/platter_test_rw_[0-9a-f]{64}/);
  });

  it.each(WEBHOOK_EVENT_TYPES)("triggers %s for real: one message of its type and a delivery to the registered endpoint, on the Deliveries page", async (type) => {
    const [endpoint] = await rows<{ id: string }>("select id from webhook_endpoints where organization_id = ?", [sandboxId]);
    const endpointId = endpoint === undefined
      ? (await area.db.run(Effect.flatMap(Operator.use((operator) => operator.scopeOf(sandboxId)), (scope) =>
        WebhookEndpointRepository.use((endpoints) => endpoints.add(scope, "https://receiver.example/hook", [], generateSigningSecret()))))).id
      : Number(endpoint.id);
    const liveBefore = await written(live.id);
    const triggered = await post(sandboxSession, "/sandbox/trigger", { type });
    expect(triggered.status).toBe(303);
    expect(triggered.headers.get("location")).toBe(`/sandbox?triggered=${type}`);
    const [message] = await rows<{ type: string; envelope_id: string; endpoint_id: string }>(
      `select m.type, m.envelope_id, d.endpoint_id from webhook_messages m join webhook_deliveries d on d.message_id = m.id
       where m.organization_id = ? order by m.id desc limit 1`, [sandboxId],
    );
    expect(message).toEqual({ type, envelope_id: expect.any(String), endpoint_id: String(endpointId) });
    expect(await written(live.id)).toEqual(liveBefore);
    const notice = await get(sandboxSession, `/sandbox?triggered=${type}`);
    expect(notice.status).toBe(200);
    expect(await notice.text()).toContain(`${type} happened in the sandbox`);
    const deliveries = await get(sandboxSession, "/deliveries");
    expect(deliveries.status).toBe(200);
    expect(await deliveries.text()).toContain(message!.envelope_id);
  });

  it.each(["", "invoice.void", "EVENT.CREATED", "event.created ", "<script>"])("answers a trigger of type %j with 400 naming the field, writing nothing", async (type) => {
    const before = await written(sandboxId);
    const refused = await post(sandboxSession, "/sandbox/trigger", { type });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("type must be one of event.created");
    expect(await written(sandboxId)).toEqual(before);
  });

  it("resets the sandbox's data after a confirmation page, keeping its messages; the live organization is untouched", async () => {
    const confirm = await get(sandboxSession, "/sandbox/reset");
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain("Reset the sandbox's data?");
    const liveBefore = await written(live.id);
    const before = await written(sandboxId);
    expect(before.clients).toBe(14);
    const reset = await post(sandboxSession, "/sandbox/reset");
    expect(reset.status).toBe(303);
    expect(reset.headers.get("location")).toBe("/sandbox?reset=1");
    expect(await written(sandboxId)).toMatchObject({ clients: 12, webhook_messages: before.webhook_messages, webhook_deliveries: before.webhook_deliveries });
    expect(await written(live.id)).toEqual(liveBefore);
    expect(await rows("select action from audit_log where organization_id = ? and action = 'sandbox.reset'", [sandboxId])).toEqual([{ action: "sandbox.reset" }]);
  });

  it("never lets a sandbox session opened with a link of its own (an operator's) into the live organization", async () => {
    // A contractor given a sign-in link to the sandbox only.
    const contractor = await signIn(area, await area.link(sandboxId, "cli"));
    const sessionsBefore = await rows("select count(*)::int as n from developer_sessions where organization_id = ?", [live.id]);
    const refused = await post(contractor, "/sandbox/switch");
    expect(refused.status).toBe(409);
    expect(refused.headers.get("set-cookie")).toBeNull();
    expect(await refused.text()).toContain("This sandbox session was not opened from the live organization");
    expect(await rows("select count(*)::int as n from developer_sessions where organization_id = ?", [live.id])).toEqual(sessionsBefore);
    // The contractor's sandbox session goes on working.
    expect((await get(contractor, "/api-keys")).status).toBe(200);
  });

  it("switches back to live, whose pages carry no Sandbox marker", async () => {
    const back = await switchFrom(sandboxSession);
    expect((await get(sandboxSession, "/api-keys")).status).toBe(401);
    for (const path of PAGES) {
      const response = await get(back, path);
      expect(response.status).toBe(200);
      const page = await response.text();
      expect(page).not.toContain(BANNER);
      expect(page).not.toContain(BADGE);
      expect(page).not.toContain("/assets/sandbox.css");
    }
  });
});
