import { exampleMessage, generateSigningSecret, storedMessage } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, openStoredEndpointSecret, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_DEVELOPER_AREA_LIMITS } from "../src/config.ts";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * The Webhooks page over HTTP, with the SSRF guard on (as in production): adding an endpoint
 * (bad input refused with 400 and nothing written), revealing and rotating its secret,
 * disabling and enabling it, sending a test event; each change audited; user-entered text rendered
 * as text; CSRF refused; and another organization's endpoints neither shown nor reachable (404).
 */

const DAY_MS = 24 * 3600_000;

let area: RunningArea;
let a: OrganizationFixture;
let b: OrganizationFixture;
let session: TestSession;
let bEndpoint: { id: number; secret: string };
let bDelivery: number;
beforeAll(async () => {
  // Refused URLs count against the new-endpoint limit (their lookups were spent): this file refuses many, so it allows more.
  area = await startArea(inject("pgAdminUrl"), "'self'", {
    allowPrivateNetworks: false, secretOverlapMs: DAY_MS, limits: { ...DEFAULT_DEVELOPER_AREA_LIMITS, endpointCreates: 100 },
  });
  a = await createOrganization(area.db, "Hooks of A Catering");
  b = await createOrganization(area.db, "Hooks of B Catering");
  session = await signIn(area, await area.link(a.id));
  bEndpoint = await area.db.run(WebhookEndpointRepository.use((all) => all.add(b.scope, "https://198.51.100.20/b-only", [], generateSigningSecret())));
  bDelivery = (await area.db.run(WebhookEndpointRepository.use((all) => all.sendTestMessage(b.scope, bEndpoint.id, exampleMessage("event.created"))))).delivery_id;
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const getPage = (path: string) => fetch(area.origin + path, { headers: { cookie: session.cookie }, redirect: "manual" });
const post = (path: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  postForm(area, path, { form_token: session.formToken, ...fields }, { cookie: session.cookie, ...headers });
const add = (url: string, choice = "all", types: string[] = []) =>
  post("/webhooks", { url, choice, ...Object.fromEntries(types.map((type) => [`type:${type}`, "on"])) });
const idFrom = (response: Response) => Number(/^\/webhooks\/(\d+)\?done=added$/.exec(response.headers.get("location") ?? "")?.[1]);
const counts = async () =>
  (await rows<{ endpoints: number; messages: number; deliveries: number; audit: number }>(
    `select (select count(*)::int from webhook_endpoints) as endpoints, (select count(*)::int from webhook_messages) as messages,
       (select count(*)::int from webhook_deliveries) as deliveries, (select count(*)::int from audit_log) as audit`,
  ))[0];
const auditOf = (id: number) => rows<{ action: string }>("select action from audit_log where subject = ? order by id", [`webhook_endpoint ${id}`]);
/** An endpoint's row, its secrets opened (they are stored sealed). */
const endpointRow = async (id: number) => {
  const row = (await rows<{ url: string; event_types: string[]; enabled: boolean; disabled_reason: string | null; secret: string; previous_secret: string | null; previous_secret_until: string | null; organization_id: string }>(
    "select url, event_types, enabled, disabled_reason, secret, previous_secret, previous_secret_until, organization_id from webhook_endpoints where id = ?",
    [id],
  ))[0]!;
  return {
    ...row,
    secret: openStoredEndpointSecret(row.secret, row.organization_id, id)!,
    previous_secret: openStoredEndpointSecret(row.previous_secret, row.organization_id, id),
  };
};

describe("adding an endpoint", () => {
  it("offers every catalog type as a labelled checkbox", async () => {
    const response = await getPage("/webhooks/new");
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('<label for="endpoint-url">Endpoint URL</label>');
    for (const type of ["event.created", "event.inquiry", "invoice.sent", "invoice.paid", "proposal.approved", "client.created"]) {
      expect(page).toContain(`name="type:${type}"`);
    }
  });

  it("registers a public URL with the types ticked, audits it with the session's link, and lists it", async () => {
    const response = await add("https://203.0.113.10/platter/hooks", "some", ["invoice.paid", "event.created"]);
    expect(response.status).toBe(303);
    const id = idFrom(response);
    expect(await endpointRow(id)).toMatchObject({
      url: "https://203.0.113.10/platter/hooks", event_types: ["event.created", "invoice.paid"], enabled: true, organization_id: String(a.id),
    });
    const [audit] = await rows<{ action: string; organization_id: string; session_id: string; link_id: string }>(
      "select action, organization_id, session_id, link_id from audit_log where subject = ?", [`webhook_endpoint ${id}`],
    );
    expect(audit).toMatchObject({ action: "webhook_endpoint.added", organization_id: String(a.id) });
    const [link] = await rows<{ link_id: string }>("select link_id from developer_sessions where id = ?", [audit!.session_id]);
    expect(link!.link_id).toBe(audit!.link_id);

    const endpointPage = await getPage(`/webhooks/${id}?done=added`);
    expect(endpointPage.status).toBe(200);
    const text = await endpointPage.text();
    expect(text).toContain("Endpoint added.");
    expect(text).not.toContain((await endpointRow(id)).secret);
    const list = await (await getPage("/webhooks")).text();
    expect(list).toContain(`<a href="/webhooks/${id}">https://203.0.113.10/platter/hooks</a>`);
    expect(list).toContain("<code>invoice.paid</code>");
    expect(list).toContain("No attempts");
  });

  it.each([
    ["loopback", "http://127.0.0.1:8080/hooks", "Webhooks are sent only to public internet addresses, and 127.0.0.1 is not allowed."],
    ["the cloud metadata address", "http://169.254.169.254/latest/meta-data", "Webhooks are sent only to public internet addresses, and 169.254.169.254 is not allowed."],
    ["a private network", "https://10.1.2.3/hooks", "Webhooks are sent only to public internet addresses, and 10.1.2.3 is not allowed."],
    ["IPv6 loopback", "http://[::1]:9000/", "Webhooks are sent only to public internet addresses, and ::1 is not allowed."],
    ["a host name resolving to loopback, without what it resolves to", "http://localhost:8080/hooks", "Webhooks are sent only to public internet addresses, and localhost has none: check the URL's host name."],
    ["a host name resolving to nothing, answered as one resolving internally", "http://no-such-host.invalid/hooks", "Webhooks are sent only to public internet addresses, and no-such-host.invalid has none: check the URL's host name."],
    ["an IPv4-mapped internal address", "http://[::ffff:192.168.0.1]/", "Webhooks are sent only to public internet addresses, and ::ffff:c0a8:1 is not allowed."],
    ["no URL", "", "Enter the URL that should receive the webhooks"],
    ["another scheme", "ftp://203.0.113.10/hooks", "The URL must start with https:// (or http://)"],
    ["not a URL", "hooks.example", "Enter a full URL, such as https://example.com/webhooks"],
  ])("refuses %s with 400 beside the URL field, and writes nothing", async (_case, url, message) => {
    const before = await counts();
    const response = await add(url);
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).toContain(`<p class="field-error" id="endpoint-url-error">${message.replaceAll("'", "&#39;")}</p>`);
    expect(page).toContain('aria-invalid="true"');
    expect(page).toContain(`value="${url}"`);
    expect(await counts()).toEqual(before);
  });

  it.each([
    ["nothing ticked", "some", [], "Pick at least one event type, or choose every event type"],
    ["an unknown type", "some", ["event.deleted"], "Unknown event type &quot;event.deleted&quot;"],
    ["no choice", "", [], "Choose every event type, or pick the ones to receive"],
  ])("refuses %s with 400 beside the event types, and writes nothing", async (_case, choice, types, message) => {
    const before = await counts();
    const response = await add("https://203.0.113.10/hooks", choice, types);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(`<p class="field-error" id="event-types-error">${message}</p>`);
    expect(await counts()).toEqual(before);
  });

  it("renders a URL and an event type of markup as text", async () => {
    const url = "https://203.0.113.10/hooks?next=<script>alert(1)</script>";
    const added = await add(url);
    expect(added.status).toBe(303);
    const id = idFrom(added);
    const refusedType = await add("https://203.0.113.10/hooks", "some", ["<script>alert(2)</script>"]);
    expect(refusedType.status).toBe(400);
    const refusedTest = await post(`/webhooks/${id}/test`, { type: "<script>alert(3)</script>" });
    expect(refusedTest.status).toBe(400);
    const pages = [
      await (await getPage("/webhooks")).text(), await (await getPage(`/webhooks/${id}`)).text(), await (await getPage(`/webhooks/${id}/rotate`)).text(),
      await refusedType.text(), await refusedTest.text(),
    ];
    for (const page of pages) expect(page).not.toMatch(/<script>alert/);
    for (const page of pages.slice(0, 3)) expect(page).toContain("next=&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(pages[3]).toContain("Unknown event type &quot;&lt;script&gt;alert(2)&lt;/script&gt;&quot;");
    expect(pages[4]).toContain("Choose an event type of the catalog.");
  });
});

describe("an endpoint's secret, state and test events", () => {
  let id: number;
  beforeAll(async () => {
    id = idFrom(await add("https://203.0.113.11/receiver"));
  });

  it("reveals the signing secret only on a deliberate POST, uncached, and audits it", async () => {
    expect(await (await getPage(`/webhooks/${id}`)).text()).not.toContain("whsec_");
    const response = await post(`/webhooks/${id}/secret`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const page = await response.text();
    expect(page).toContain(`value="${(await endpointRow(id)).secret}"`);
    expect(page).toContain('data-copy-from="signing-secret"');
    expect((await auditOf(id)).map((entry) => entry.action)).toContain("webhook_endpoint.secret_revealed");
  });

  it("rotates the secret after a confirmation; the old one keeps signing for the configured overlap", async () => {
    const old = (await endpointRow(id)).secret;
    const confirm = await getPage(`/webhooks/${id}/rotate`);
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain("for <strong>24 hours</strong>");
    expect((await endpointRow(id)).secret).toBe(old);

    const started = Date.now();
    const rotated = await post(`/webhooks/${id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("cache-control")).toBe("no-store");
    const row = await endpointRow(id);
    expect(row.secret).not.toBe(old);
    expect(row.previous_secret).toBe(old);
    const until = Date.parse(row.previous_secret_until!);
    expect(until).toBeGreaterThanOrEqual(started + DAY_MS - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + DAY_MS + 1000);
    const page = await rotated.text();
    expect(page).toContain(`value="${row.secret}"`);
    expect(page).toContain("The previous secret keeps signing beside this one until");
    expect((await auditOf(id)).map((entry) => entry.action)).toContain("webhook_endpoint.secret_rotated");
  });

  it("sends a test event of any catalog type to this endpoint only, and shows its delivery", async () => {
    const everything = idFrom(await add("https://203.0.113.12/all-events"));
    const before = await counts();
    const sent = await post(`/webhooks/${id}/test`, { type: "proposal.approved" });
    expect(sent.status).toBe(303);
    const location = sent.headers.get("location")!;
    const deliveryId = Number(new RegExp(`^/webhooks/${id}/test/(\\d+)$`).exec(location)?.[1]);
    expect(await counts()).toEqual({ ...before, messages: before!.messages + 1, deliveries: before!.deliveries + 1, audit: before!.audit + 1 });
    const [delivery] = await rows<{ endpoint_id: string; status: string; type: string; payload: unknown; organization_id: string }>(
      "select d.endpoint_id, d.status, m.type, m.payload, m.organization_id from webhook_deliveries d join webhook_messages m on m.id = d.message_id where d.id = ?",
      [deliveryId],
    );
    expect(delivery).toEqual({
      endpoint_id: String(id), status: "pending", type: "proposal.approved", organization_id: String(a.id),
      payload: storedMessage(exampleMessage("proposal.approved")).payload,
    });
    expect(await rows("select id from webhook_deliveries where endpoint_id = ?", [everything])).toEqual([]);
    expect((await auditOf(id)).at(-1)).toEqual({ action: "webhook_endpoint.test_sent" });

    const page = await getPage(location);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('<meta http-equiv="refresh" content="2">');
    expect(text).toContain("Waiting for the first attempt");
    expect(text).toContain("<dt>Next try</dt><dd>Now</dd>");
    expect(text).toContain("Spring gala: 120 guests, three courses");
    // The delivery is only reachable under its own endpoint.
    expect((await getPage(`/webhooks/${everything}/test/${deliveryId}`)).status).toBe(404);
  });

  it("disables by hand (saying so), refuses test events while disabled, and enables again", async () => {
    const disabled = await post(`/webhooks/${id}/disable`);
    expect(disabled.status).toBe(303);
    expect(disabled.headers.get("location")).toBe(`/webhooks/${id}?done=disabled`);
    expect(await endpointRow(id)).toMatchObject({ enabled: false, disabled_reason: "disabled by hand in the Developer area" });
    const page = await (await getPage(`/webhooks/${id}?done=disabled`)).text();
    expect(page).toContain("Disabled by hand in the Developer area.");
    expect(page).toContain("Enable endpoint");
    expect(await (await getPage("/webhooks")).text()).toContain("Disabled by hand in the Developer area.");

    const before = await counts();
    const refused = await post(`/webhooks/${id}/test`, { type: "event.created" });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("This endpoint is disabled: enable it to send it a test event.");
    expect(await counts()).toEqual(before);

    const enabled = await post(`/webhooks/${id}/enable`);
    expect(enabled.status).toBe(303);
    expect(await endpointRow(id)).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await auditOf(id)).map((entry) => entry.action).slice(-2)).toEqual(["webhook_endpoint.disabled", "webhook_endpoint.enabled"]);
  });

  it("records only real changes: enabling an enabled endpoint, or disabling a disabled one, is not audited", async () => {
    const audited = async () => (await auditOf(id)).length;
    const start = await audited();
    expect((await post(`/webhooks/${id}/enable`)).status).toBe(303);
    expect(await audited()).toBe(start);
    expect((await post(`/webhooks/${id}/disable`)).status).toBe(303);
    expect((await post(`/webhooks/${id}/disable`)).status).toBe(303);
    expect(await audited()).toBe(start + 1);
    expect((await post(`/webhooks/${id}/enable`)).status).toBe(303);
    expect((await post(`/webhooks/${id}/enable`)).status).toBe(303);
    expect((await auditOf(id)).slice(start).map((entry) => entry.action)).toEqual(["webhook_endpoint.disabled", "webhook_endpoint.enabled"]);
    expect(await endpointRow(id)).toMatchObject({ enabled: true });
  });
});

describe("forms from elsewhere", () => {
  it.each([
    ["no form token", { form_token: "" }, {}],
    ["another session's token", { form_token: "x".repeat(43) }, {}],
    ["another origin", {}, { origin: "https://evil.example" }],
    ["a cross-site fetch", {}, { "sec-fetch-site": "cross-site" }],
  ])("are refused (%s) with 403 before anything is done", async (_case, fields, headers) => {
    const [{ id }] = (await rows<{ id: string }>("select id from webhook_endpoints where organization_id = ? order by id limit 1", [a.id])) as [{ id: string }];
    const before = await counts();
    const secretBefore = (await endpointRow(Number(id))).secret;
    for (const [path, extra] of [
      ["/webhooks", { url: "https://203.0.113.13/x", choice: "all" }], [`/webhooks/${id}/rotate`, {}], [`/webhooks/${id}/disable`, {}],
      [`/webhooks/${id}/test`, { type: "event.created" }], [`/webhooks/${id}/secret`, {}],
    ] as const) {
      const response = await post(path, { ...extra, ...fields }, headers);
      expect(response.status).toBe(403);
      expect(await response.text()).not.toContain("whsec_");
    }
    expect(await counts()).toEqual(before);
    expect(await endpointRow(Number(id))).toMatchObject({ secret: secretBefore, enabled: true });
  });
});

describe("another organization's endpoints", () => {
  it("are not listed", async () => {
    const list = await (await getPage("/webhooks")).text();
    expect(list).not.toContain("b-only");
    expect(list).not.toContain("Hooks of B Catering");
  });

  it.each([
    ["B's endpoint", () => bEndpoint.id, () => bDelivery],
    ["an endpoint that does not exist", () => 987_654_321, () => bDelivery],
  ])("%s cannot be seen or acted on: 404 everywhere, nothing changed or audited", async (_case, id, delivery) => {
    const before = await counts();
    for (const path of [`/webhooks/${id()}`, `/webhooks/${id()}/rotate`, `/webhooks/${id()}/test/${delivery()}`]) {
      expect((await getPage(path)).status).toBe(404);
    }
    for (const [path, fields] of [
      [`/webhooks/${id()}/secret`, {}], [`/webhooks/${id()}/rotate`, {}], [`/webhooks/${id()}/disable`, {}], [`/webhooks/${id()}/enable`, {}],
      [`/webhooks/${id()}/test`, { type: "event.created" }],
    ] as const) {
      const response = await post(path, fields);
      expect(response.status).toBe(404);
      expect(await response.text()).not.toContain(bEndpoint.secret);
    }
    expect(await counts()).toEqual(before);
    expect(await endpointRow(bEndpoint.id)).toMatchObject({ secret: bEndpoint.secret, previous_secret: null, enabled: true });
    expect(await auditOf(id())).toEqual([]);
  });
});
