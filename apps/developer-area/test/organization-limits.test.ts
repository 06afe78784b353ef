import { exampleMessage } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * Every organization's share in the Developer area: at most `WEBHOOK_ENDPOINTS_PER_ORGANIZATION`
 * endpoints (refused beside the URL field with 400), and per window at most so many new
 * endpoints, test events and replays (refused with a 429 page saying when to retry). A refusal
 * writes nothing, audits nothing, and leaves other organizations their own allowance.
 */

const LIMITS = { testEvents: 2, endpointCreates: 3, replays: 2, keyChanges: 100, endpointChanges: 100, sandboxResets: 100, sandboxSwitches: 100, alertAddresses: 100, windowMs: 600_000 };

let area: RunningArea;
let a: OrganizationFixture;
let b: OrganizationFixture;
let sessionA: TestSession;
let sessionB: TestSession;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { allowPrivateNetworks: false, endpointsPerOrganization: 2, limits: LIMITS });
  a = await createOrganization(area.db, "Limits A");
  b = await createOrganization(area.db, "Limits B");
  sessionA = await signIn(area, await area.link(a.id));
  sessionB = await signIn(area, await area.link(b.id));
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const post = (session: TestSession, path: string, fields: Record<string, string> = {}) =>
  postForm(area, path, { form_token: session.formToken, ...fields }, { cookie: session.cookie });
const add = (session: TestSession, url: string) => post(session, "/webhooks", { url, choice: "all" });
/** What a refusal must leave as it was: every row count of the webhook tables and the audit log. */
const counts = async () =>
  (await rows<Record<string, number>>(
    `select (select count(*)::int from webhook_endpoints) as endpoints, (select count(*)::int from webhook_messages) as messages,
       (select count(*)::int from webhook_deliveries) as deliveries, (select count(*)::int from audit_log) as audit,
       (select count(*)::int from webhook_deliveries where next_attempt_at <= now() and status = 'pending') as due`,
  ))[0]!;

describe("the limit on endpoints per organization", () => {
  it("refuses the endpoint beyond it with 400, the reason beside the URL field, the URL kept, and nothing written", async () => {
    expect((await add(sessionA, "https://203.0.113.10/one")).status).toBe(303);
    const second = await add(sessionA, "https://203.0.113.10/two");
    expect(second.status).toBe(303);
    // A disabled endpoint still counts.
    const secondId = /^\/webhooks\/(\d+)/.exec(second.headers.get("location")!)![1]!;
    expect((await post(sessionA, `/webhooks/${secondId}/disable`)).status).toBe(303);
    const before = await counts();
    const refused = await add(sessionA, "https://203.0.113.10/three");
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toContain(
      '<p class="field-error" id="endpoint-url-error">This organization already has 2 webhook endpoints, the most it may have (disabled ones count). Reuse one of them, or ask your Platter contact to raise the limit.</p>',
    );
    expect(page).toContain('value="https://203.0.113.10/three" aria-invalid="true" aria-describedby="endpoint-url-error"');
    expect(await counts()).toEqual(before);
    expect(await rows("select id from webhook_endpoints where url = 'https://203.0.113.10/three'")).toEqual([]);
  });
});

describe("the per-window limits", () => {
  it("refuse a new endpoint beyond DEVELOPER_AREA_ENDPOINT_CREATES with a 429 page saying when to retry, and write nothing", async () => {
    // A's creations of the window: two above (the one refused by the endpoints' limit did nothing, so it is not counted).
    // One endpoint fewer (moved out of the way by the test) lets A make its third, and the fourth is refused.
    await rows("delete from webhook_endpoints where organization_id = ? and url = 'https://203.0.113.10/two'", [a.id]);
    expect((await add(sessionA, "https://203.0.113.10/four")).status).toBe(303);
    const before = await counts();
    const refused = await add(sessionA, "https://203.0.113.10/five");
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(600);
    const page = await refused.text();
    expect(page).toContain("<h1>Too many new endpoints for now</h1>");
    expect(page).toMatch(/Your organization may make 3 new endpoints every 10 minutes, and has\. Nothing was done\. Try again in \d+ (minutes?|seconds?)\./);
    expect(page).toContain('href="/webhooks"');
    expect(await counts()).toEqual(before);
    // Another organization has its own allowance.
    expect((await add(sessionB, "https://203.0.113.20/b")).status).toBe(303);
  });

  it("does not count a form refused as invalid", async () => {
    // B has made one of its three; three refused forms later, it may still make one.
    for (const url of ["ftp://x", "not a url", "https://"]) expect((await add(sessionB, url)).status).toBe(400);
    expect((await add(sessionB, "https://203.0.113.20/b2")).status).toBe(303);
  });

  it("counts a URL the SSRF guard refused, which may have cost a DNS lookup: refused lookups are bounded like accepted creates", async () => {
    const c = await createOrganization(area.db, "Limits C");
    const sessionC = await signIn(area, await area.link(c.id));
    for (const url of ["https://localhost/a", "https://localhost/b", "http://127.0.0.1/internal"]) {
      const refused = await add(sessionC, url);
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain("Webhooks are sent only to public internet addresses");
    }
    const before = await counts();
    const over = await add(sessionC, "https://203.0.113.30/c");
    expect(over.status).toBe(429);
    expect(await over.text()).toContain("<h1>Too many new endpoints for now</h1>");
    expect(await counts()).toEqual(before);
  });

  it("refuse a test event beyond DEVELOPER_AREA_TEST_EVENTS with 429, and write neither a message nor an audit row", async () => {
    const [endpoint] = await rows<{ id: string }>("select id from webhook_endpoints where organization_id = ? and enabled order by id limit 1", [a.id]);
    for (const _ of [1, 2]) expect((await post(sessionA, `/webhooks/${endpoint!.id}/test`, { type: "client.created" })).status).toBe(303);
    const before = await counts();
    const refused = await post(sessionA, `/webhooks/${endpoint!.id}/test`, { type: "client.created" });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const page = await refused.text();
    expect(page).toContain("<h1>Too many test events for now</h1>");
    expect(page).toContain(`href="/webhooks/${endpoint!.id}"`);
    expect(await counts()).toEqual(before);
  });

  it("refuse a replay beyond DEVELOPER_AREA_REPLAYS (of a message or of failed messages) with 429, and change and audit nothing", async () => {
    const [endpoint] = await rows<{ id: string }>("select id from webhook_endpoints where organization_id = ? order by id limit 1", [b.id]);
    const { delivery_id } = await area.db.run(WebhookEndpointRepository.use((all) => all.sendTestMessage(b.scope, Number(endpoint!.id), exampleMessage("event.created"))));
    await rows("update webhook_deliveries set status = 'failed', attempts = 8, completed_at = now() where id = ?", [delivery_id]);
    const [message] = await rows<{ envelope_id: string }>(
      "select m.envelope_id from webhook_messages m join webhook_deliveries d on d.message_id = m.id where d.id = ?", [delivery_id],
    );
    expect((await post(sessionB, "/deliveries/replay-failed", { endpoint: endpoint!.id, since: "2020-01-01T00:00" })).status).toBe(303);
    await rows("update webhook_deliveries set status = 'failed', attempts = 8, completed_at = now() where id = ?", [delivery_id]);
    expect((await post(sessionB, `/deliveries/${message!.envelope_id}/replay`)).status).toBe(303);
    await rows("update webhook_deliveries set status = 'failed', attempts = 8, completed_at = now() where id = ?", [delivery_id]);
    const before = await counts();
    const refusedMessage = await post(sessionB, `/deliveries/${message!.envelope_id}/replay`);
    expect(refusedMessage.status).toBe(429);
    expect(await refusedMessage.text()).toContain("<h1>Too many replays for now</h1>");
    const refusedFailed = await post(sessionB, "/deliveries/replay-failed", { endpoint: endpoint!.id, since: "2020-01-01T00:00" });
    expect(refusedFailed.status).toBe(429);
    expect(await counts()).toEqual(before);
    expect(await rows("select status from webhook_deliveries where id = ?", [delivery_id])).toEqual([{ status: "failed" }]);
  });
});
