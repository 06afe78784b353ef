import { readFile } from "node:fs/promises";
import { buildOpenApiDocument } from "@platter/contract";
import { WEBHOOK_EVENT_TYPES } from "@platter/domain";
import { Seeding } from "@platter/seeds";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * The Deliveries, Event catalog and API reference pages over HTTP: the log page by page and
 * filtered, a message with every attempt (a receiver's body shown as text), replays (audited,
 * refused without the form token or from another origin), one organization's session never
 * reaching another's messages; the catalog's examples; the reference's document and its CSP.
 */

let area: RunningArea;
let a: OrganizationFixture;
let b: OrganizationFixture;
let sessionA: TestSession;
let sessionB: TestSession;
/** A's message whose first failed attempt answered a body of markup. */
let marked: { envelope: string; messageId: number; deliveryId: number; endpointId: number };

const SCRIPT_BODY = `<script>alert("from the receiver")</script>`;

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const get = (path: string, session: TestSession) => fetch(area.origin + path, { headers: { cookie: session.cookie }, redirect: "manual" });
const post = (path: string, session: TestSession, fields: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  postForm(area, path, { form_token: session.formToken, ...fields }, { cookie: session.cookie, ...headers });
/** The envelope ids a log page links to, in order. */
const envelopesIn = (page: string) => [...page.matchAll(/<a class="mono" href="\/deliveries\/(evt_[0-9a-f]+)">/g)].map((match) => match[1]!);
const olderLink = (page: string) => /<a class="button" rel="next" href="([^"]+)">/.exec(page)?.[1]?.replaceAll("&amp;", "&");

beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  a = await createOrganization(area.db, "Deliveries of A");
  b = await createOrganization(area.db, "Deliveries of B");
  await area.db.run(Seeding.deliveryLog(a.scope, { deliveries: 120, endpoints: 2 }));
  const [failed] = await rows<{ envelope_id: string; message_id: string; id: string; endpoint_id: string }>(
    `select m.envelope_id, d.message_id, d.id, d.endpoint_id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
     where d.organization_id = ? and d.status = 'failed' order by d.id limit 1`,
    [a.id],
  );
  await rows("update webhook_attempts set response_body = ? where delivery_id = ? and attempt = 1", [SCRIPT_BODY, failed!.id]);
  marked = { envelope: failed!.envelope_id, messageId: Number(failed!.message_id), deliveryId: Number(failed!.id), endpointId: Number(failed!.endpoint_id) };
  sessionA = await signIn(area, await area.link(a.id));
  sessionB = await signIn(area, await area.link(b.id));
});
afterAll(() => area?.stop());

/** A's envelope ids in the log's order, by SQL. */
const expectedEnvelopes = async (where = "true", params: unknown[] = []) =>
  (await rows<{ envelope_id: string }>(
    `select m.envelope_id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
     where d.organization_id = ? and ${where} order by d.created_at desc, d.id desc`,
    [a.id, ...params],
  )).map((row) => row.envelope_id);

describe("the message log", () => {
  it("lists the organization's deliveries newest first, 50 a page, and walks to the end", async () => {
    const seen: string[] = [];
    let path: string | undefined = "/deliveries";
    let pages = 0;
    while (path !== undefined) {
      const response = await get(path, sessionA);
      expect(response.status).toBe(200);
      const page = await response.text();
      seen.push(...envelopesIn(page));
      path = olderLink(page);
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(await expectedEnvelopes());
  });

  it.each<[string, string, string, (ids: { endpoint: number }) => unknown[]]>([
    ["status", "status=failed", "d.status = 'failed'", () => []],
    ["event type", "type=invoice.sent", "m.type = 'invoice.sent'", () => []],
    ["endpoint", "endpoint=ENDPOINT", "d.endpoint_id = ?", ({ endpoint }) => [endpoint]],
    ["status and endpoint", "status=failed&endpoint=ENDPOINT", "d.status = 'failed' and d.endpoint_id = ?", ({ endpoint }) => [endpoint]],
  ])("filters by %s", async (_name, query, where, params) => {
    const expected = await expectedEnvelopes(where, params({ endpoint: marked.endpointId }));
    const response = await get(`/deliveries?${query.replace("ENDPOINT", String(marked.endpointId))}`, sessionA);
    expect(response.status).toBe(200);
    expect(expected.length).toBeGreaterThan(0);
    expect(envelopesIn(await response.text())).toEqual(expected.slice(0, 50));
  });

  it("filters by time, from inclusive and to exclusive (UTC)", async () => {
    const times = await rows<{ at: string }>(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') as at from webhook_deliveries
       where organization_id = ? order by created_at, id`,
      [a.id],
    );
    const from = times[20]!.at;
    const to = times[60]!.at;
    const expected = await expectedEnvelopes("d.created_at >= ?::timestamp at time zone 'UTC' and d.created_at < ?::timestamp at time zone 'UTC'", [from, to]);
    const response = await get(`/deliveries?from=${from}&to=${to}`, sessionA);
    expect(response.status).toBe(200);
    expect(envelopesIn(await response.text())).toEqual(expected);
    expect(expected.length).toBeGreaterThanOrEqual(38);
  });

  it.each([
    ["an unknown status", "status=lost", "status must be pending, succeeded or failed"],
    ["an unknown event type", "type=client.deleted", "type must be one of the event types"],
    ["a time that is not one", "from=yesterday", "from must be a time written YYYY-MM-DDTHH:MM (UTC)"],
    ["an empty window", "from=2026-11-24T10:00&to=2026-11-24T09:00", "to must be after from"],
    ["an altered cursor", "cursor=bm90LWEtY3Vyc29y", "This page link is not valid"],
  ])("answers %s with 400 and says why", async (_case, query, message) => {
    const response = await get(`/deliveries?${query}`, sessionA);
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).toContain(message);
    expect(envelopesIn(page)).toEqual([]);
  });

  it("is empty for another organization's session, which sees none of A's messages", async () => {
    const response = await get("/deliveries", sessionB);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(envelopesIn(page)).toEqual([]);
    expect(page).toContain("No deliveries match.");
  });

  it.each([
    ["A's endpoint, to B's session", () => String(marked.endpointId)],
    ["an endpoint that does not exist", () => "987654321"],
  ])("is the 404 page when filtered by %s", async (_case, endpoint) => {
    const response = await get(`/deliveries?endpoint=${endpoint()}`, sessionB);
    expect(response.status).toBe(404);
    const page = await response.text();
    expect(page).toContain("Page not found");
    expect(envelopesIn(page)).toEqual([]);
  });
});

describe("a message's page", () => {
  it("shows each delivery with every attempt, and a receiver's markup as text", async () => {
    const response = await get(`/deliveries/${marked.envelope}`, sessionA);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain("&lt;script&gt;alert(&quot;from the receiver&quot;)&lt;/script&gt;");
    expect(page).not.toContain(SCRIPT_BODY);
    expect(page).toContain("connect ECONNREFUSED 203.0.113.7:443");
    expect(page).toContain('<span class="status-code status-bad">500</span>');
    const [message] = await rows<{ type: string }>("select type from webhook_messages where id = ?", [marked.messageId]);
    expect(page).toContain(`&quot;type&quot;: &quot;${message!.type}&quot;`);
    expect(page).toContain(`&quot;id&quot;: &quot;${marked.envelope}&quot;`);
  });

  it("says when a stored response body is only its first 1 KiB", async () => {
    const [second] = await rows<{ envelope_id: string; id: string }>(
      `select m.envelope_id, d.id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
       where d.organization_id = ? and d.id <> ? and exists (select 1 from webhook_attempts a where a.delivery_id = d.id) order by d.id limit 1`,
      [a.id, marked.deliveryId],
    );
    await rows("update webhook_attempts set response_body = ? where delivery_id = ?", ["x".repeat(1024), second!.id]);
    expect(await (await get(`/deliveries/${second!.envelope_id}`, sessionA)).text()).toContain("first 1 KiB: the rest was not kept");
    // A short body is shown whole, and says nothing of the kind.
    expect(await (await get(`/deliveries/${marked.envelope}`, sessionA)).text()).not.toContain("first 1 KiB");
  });

  it.each([
    ["A's message, to B's session", () => `/deliveries/${marked.envelope}`],
    ["a message that does not exist", () => "/deliveries/evt_00000000000000000000000000000000"],
    ["a malformed id", () => "/deliveries/12"],
  ])("is the 404 page for %s", async (_case, path) => {
    const response = await get(path(), sessionB);
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain(marked.envelope);
  });
});

describe("replays", () => {
  const statuses = (messageId: number) =>
    rows<{ id: string; status: string }>("select id, status from webhook_deliveries where message_id = ? order by id", [messageId]);
  const audits = (subject: string) => rows<{ action: string; organization_id: string; session_id: string | null }>(
    "select action, organization_id, session_id from audit_log where subject like ? order by id", [subject],
  );

  it.each([
    ["no form token", (path: string) => postForm(area, path, {}, { cookie: sessionA.cookie })],
    ["another session's form token", (path: string) => postForm(area, path, { form_token: sessionB.formToken }, { cookie: sessionA.cookie })],
    ["another origin", (path: string) => post(path, sessionA, {}, { origin: "https://evil.example" })],
  ])("are refused with 403 and change nothing when sent with %s", async (_case, send) => {
    const before = await statuses(marked.messageId);
    const response = await send(`/deliveries/${marked.envelope}/replay`);
    expect(response.status).toBe(403);
    expect(await statuses(marked.messageId)).toEqual(before);
    expect(await audits(`message ${marked.envelope}%`)).toEqual([]);
  });

  it("of A's message are the 404 page for B's session, and change nothing", async () => {
    const before = await statuses(marked.messageId);
    const all = await post(`/deliveries/${marked.envelope}/replay`, sessionB);
    expect(all.status).toBe(404);
    const one = await post(`/deliveries/${marked.envelope}/replay`, sessionB, { delivery: String(marked.deliveryId) });
    expect(one.status).toBe(404);
    const failed = await post("/deliveries/replay-failed", sessionB, { endpoint: String(marked.endpointId), since: "2020-01-01T00:00" });
    expect(failed.status).toBe(404);
    expect(await statuses(marked.messageId)).toEqual(before);
  });

  it("send one delivery again, audited with the session's organization", async () => {
    const response = await post(`/deliveries/${marked.envelope}/replay`, sessionA, { delivery: String(marked.deliveryId) });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/deliveries/${marked.envelope}?replayed=1`);
    expect((await statuses(marked.messageId)).find((row) => Number(row.id) === marked.deliveryId)?.status).toBe("pending");
    expect(await audits(`delivery ${marked.deliveryId} of message ${marked.envelope}`)).toEqual([
      { action: "delivery.replayed", organization_id: String(a.id), session_id: expect.any(String) },
    ]);
    const page = await (await get(`/deliveries/${marked.envelope}?replayed=1`, sessionA)).text();
    expect(page).toContain("1 delivery is due again");
  });

  it("send a message again to all its endpoints", async () => {
    const [other] = await rows<{ envelope_id: string; id: string }>(
      `select m.envelope_id, m.id from webhook_messages m where m.organization_id = ?
       and not exists (select 1 from webhook_deliveries d where d.message_id = m.id and d.status = 'pending') order by m.id limit 1`,
      [a.id],
    );
    const response = await post(`/deliveries/${other!.envelope_id}/replay`, sessionA);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/deliveries/${other!.envelope_id}?replayed=2`);
    expect((await statuses(Number(other!.id))).map((row) => row.status)).toEqual(["pending", "pending"]);
    expect(await audits(`message ${other!.envelope_id}`)).toEqual([{ action: "message.replayed", organization_id: String(a.id), session_id: expect.any(String) }]);
  });

  it("send an endpoint's failed messages since a time again, and no earlier ones", async () => {
    // Three of the endpoint's settled deliveries, oldest first, failed (and nothing else of it).
    await rows("update webhook_deliveries set status = 'succeeded' where endpoint_id = ? and status = 'failed'", [marked.endpointId]);
    const failed = await rows<{ id: string; at: string }>(
      `update webhook_deliveries set status = 'failed' where id in (select id from webhook_deliveries
         where endpoint_id = ? and status = 'succeeded' order by created_at, id limit 3)
       returning id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') as at`,
      [marked.endpointId],
    );
    failed.sort((x, y) => (x.at < y.at ? -1 : 1));
    const response = await post("/deliveries/replay-failed", sessionA, { endpoint: String(marked.endpointId), since: failed[1]!.at });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/deliveries?endpoint=${marked.endpointId}&replayed=2`);
    expect(await rows("select id from webhook_deliveries where endpoint_id = ? and status = 'failed'", [marked.endpointId])).toEqual([{ id: failed[0]!.id }]);
    expect(await audits(`webhook_endpoint ${marked.endpointId} since %`)).toEqual([
      { action: "deliveries.replayed_failed", organization_id: String(a.id), session_id: expect.any(String) },
    ]);
    const page = await (await get(`/deliveries?endpoint=${marked.endpointId}&replayed=2`, sessionA)).text();
    expect(page).toContain("2 deliveries are due again");
  });

  it("of a delivery still retrying tries it now (its next attempt only), with a \"Retry now\" button, audited", async () => {
    const [waiting] = await rows<{ id: string; message_id: string; envelope_id: string }>(
      `update webhook_deliveries set status = 'pending', completed_at = null, next_attempt_at = now() + interval '1 hour'
       where id = (select d.id from webhook_deliveries d where d.organization_id = ? and d.attempts > 0 and d.id <> ? order by d.id desc limit 1)
       returning id, message_id, (select envelope_id from webhook_messages m where m.id = message_id)`,
      [a.id, marked.deliveryId],
    );
    const before = await rows("select status, attempts, created_at from webhook_deliveries where id = ?", [waiting!.id]);
    const page = await (await get(`/deliveries/${waiting!.envelope_id}`, sessionA)).text();
    expect(page).toContain(`<input type="hidden" name="delivery" value="${waiting!.id}">`);
    expect(page).toContain("Retry now");

    const response = await post(`/deliveries/${waiting!.envelope_id}/replay`, sessionA, { delivery: waiting!.id });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/deliveries/${waiting!.envelope_id}?replayed=1`);
    expect(await rows("select status, attempts, created_at from webhook_deliveries where id = ?", [waiting!.id])).toEqual(before);
    expect(await rows("select next_attempt_at <= now() as due from webhook_deliveries where id = ?", [waiting!.id])).toEqual([{ due: true }]);
    expect(await audits(`delivery ${waiting!.id} of message ${waiting!.envelope_id}`)).toEqual([
      { action: "delivery.retried_now", organization_id: String(a.id), session_id: expect.any(String) },
    ]);

    // Now it is due: asking again changes nothing, records nothing, and the button is gone.
    const again = await post(`/deliveries/${waiting!.envelope_id}/replay`, sessionA, { delivery: waiting!.id });
    expect(again.headers.get("location")).toBe(`/deliveries/${waiting!.envelope_id}?replayed=0`);
    expect(await audits(`delivery ${waiting!.id} of message ${waiting!.envelope_id}`)).toHaveLength(1);
    const after = await (await get(`/deliveries/${waiting!.envelope_id}?replayed=0`, sessionA)).text();
    expect(after).not.toContain(`<input type="hidden" name="delivery" value="${waiting!.id}">`);
    expect(after).toContain("Nothing to replay");
  });

  it("that replay nothing are not audited", async () => {
    const [due] = await rows<{ envelope_id: string; id: string }>(
      `select m.envelope_id, m.id from webhook_messages m where m.organization_id = ?
       and not exists (select 1 from webhook_deliveries d where d.message_id = m.id and (d.status <> 'pending' or d.next_attempt_at > now()))
       and exists (select 1 from webhook_deliveries d where d.message_id = m.id) order by m.id limit 1`,
      [a.id],
    );
    const messageBefore = await audits(`message ${due!.envelope_id}`);
    const response = await post(`/deliveries/${due!.envelope_id}/replay`, sessionA);
    expect(response.headers.get("location")).toBe(`/deliveries/${due!.envelope_id}?replayed=0`);
    expect(await audits(`message ${due!.envelope_id}`)).toEqual(messageBefore);
    const failedBefore = await audits("webhook_endpoint % since %");
    const none = await post("/deliveries/replay-failed", sessionA, { endpoint: String(marked.endpointId), since: "2999-01-01T00:00" });
    expect(none.headers.get("location")).toBe(`/deliveries?endpoint=${marked.endpointId}&replayed=0`);
    expect(await audits("webhook_endpoint % since %")).toEqual(failedBefore);
  });

  it("of failed messages without a time is refused with 400 and says why", async () => {
    const response = await post("/deliveries/replay-failed", sessionA, { endpoint: String(marked.endpointId), since: "" });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("Choose the time to replay failed messages from (UTC).");
  });
});

describe("the event catalog", () => {
  it("shows every event type with its description and an example envelope", async () => {
    const response = await get("/event-catalog", sessionA);
    expect(response.status).toBe(200);
    const page = await response.text();
    for (const type of WEBHOOK_EVENT_TYPES) {
      expect(page).toContain(`<section class="panel event-type" id="${type}"`);
      expect(page).toContain(`&quot;type&quot;: &quot;${type}&quot;`);
    }
    expect(page).toContain("A client approved a proposal.");
  });
});

describe("the API reference", () => {
  it("serves the OpenAPI document the API is described by, as committed in docs/openapi.json", async () => {
    const response = await get("/api-reference/openapi.json", sessionA);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const text = await response.text();
    expect(JSON.parse(text)).toEqual(buildOpenApiDocument());
    expect(text).toBe(await readFile(new URL("../../../docs/openapi.json", import.meta.url), "utf8"));
  });

  it("relaxes the CSP for Redoc on that page only: inline styles and its search worker from blob:, scripts still 'self'", async () => {
    const response = await get("/api-reference", sessionA);
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).toContain("style-src 'self' 'unsafe-inline';");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("img-src 'self' data:;");
    expect(csp).toMatch(/; worker-src blob:$/);
    const page = await response.text();
    expect(page).toContain('<script src="/assets/redoc.standalone.js" defer></script>');
    expect(page).toContain('data-spec-url="/api-reference/openapi.json"');
    // Every other page keeps the strict policy.
    for (const path of ["/deliveries", "/event-catalog", "/api-keys"]) {
      const other = (await get(path, sessionA)).headers.get("content-security-policy")!;
      expect(other).toContain("style-src 'self'; ");
      expect(other).not.toContain("worker-src");
    }
  });

  it("serves Redoc's bundle from our own origin", async () => {
    const response = await fetch(`${area.origin}/assets/redoc.standalone.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await response.text()).length).toBeGreaterThan(500_000);
  });

  it.each([["/api-reference"], ["/api-reference/openapi.json"], ["/event-catalog"], ["/deliveries"]])("%s needs a session", async (path) => {
    const response = await fetch(area.origin + path, { redirect: "manual" });
    expect(response.status).toBe(401);
  });
});
