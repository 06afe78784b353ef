import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_DEVELOPER_AREA_LIMITS } from "../src/config.ts";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * Editing an endpoint over HTTP with the SSRF guard on: the form filled in from the endpoint, a saved
 * edit audited with the session and what changed, every refusal a 4xx that writes nothing (another
 * organization's endpoint is the 404 page), and edits counted under `endpointChanges`.
 */

let area: RunningArea;
let a: OrganizationFixture;
let b: OrganizationFixture;
let session: TestSession;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", {
    allowPrivateNetworks: false, limits: { ...DEFAULT_DEVELOPER_AREA_LIMITS, endpointChanges: 100 },
  });
  a = await createOrganization(area.db, "Edits of A");
  b = await createOrganization(area.db, "Edits of B");
  session = await signIn(area, await area.link(a.id));
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const added = async (org: OrganizationFixture, url: string) =>
  (await area.db.run(WebhookEndpointRepository.use((all) => all.add(org.scope, url, [], generateSigningSecret())))).id;
const editForm = (id: number, fields: Record<string, string>) =>
  postForm(area, `/webhooks/${id}/edit`, { form_token: session.formToken, ...fields }, { cookie: session.cookie });
const snapshot = async () => ({
  endpoints: await rows("select * from webhook_endpoints order by id"), audit: await rows("select * from audit_log order by id"),
});

describe("editing an endpoint in the Developer area", () => {
  it("shows the form filled in from the endpoint, its description escaped", async () => {
    const id = await added(a, "https://198.51.100.40/form");
    await rows("update webhook_endpoints set description = ? where id = ?", ["<script>x</script> & co", id]);
    const response = await fetch(`${area.origin}/webhooks/${id}/edit`, { headers: { cookie: session.cookie } });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('value="https://198.51.100.40/form"');
    expect(page).toContain(">&lt;script&gt;x&lt;/script&gt; &amp; co</textarea>");
    expect(page).not.toContain("<script>x</script>");
  });

  it("saves a new URL, types and description, audited with the session and what changed", async () => {
    const id = await added(a, "https://198.51.100.41/before");
    const response = await editForm(id, { url: "https://198.51.100.42/after", choice: "some", "type:invoice.paid": "on", description: "Finance" });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/webhooks/${id}?done=edited`);
    expect((await rows("select url, origin, event_types, description from webhook_endpoints where id = ?", [id]))[0]).toEqual({
      url: "https://198.51.100.42/after", origin: "https://198.51.100.42", event_types: ["invoice.paid"], description: "Finance",
    });
    const audit = await rows<{ action: string; session_id: string | null; details: unknown }>(
      "select action, session_id, details from audit_log where subject = ? order by id", [`webhook_endpoint ${id}`]);
    expect(audit).toEqual([{
      action: "webhook_endpoint.updated", session_id: expect.any(String),
      details: {
        before: { url: "https://198.51.100.41/before", event_types: [], description: null },
        after: { url: "https://198.51.100.42/after", event_types: ["invoice.paid"], description: "Finance" },
      },
    }]);
  });

  it.each<[string, (ids: { own: number; taken: number; foreign: number; listener: number }) => [number, Record<string, string>], number, string]>([
    ["a description longer than 500 characters", ({ own }) => [own, { url: "https://198.51.100.43/own", choice: "all", description: "x".repeat(501) }], 400,
      "A description may be at most 500 characters"],
    ["a URL that is not one", ({ own }) => [own, { url: "not a url", choice: "all", description: "" }], 400, "A URL may not contain spaces or control characters"],
    ["a private URL", ({ own }) => [own, { url: "http://10.1.2.3/hook", choice: "all", description: "" }], 400,
      "Webhooks are sent only to public internet addresses, and 10.1.2.3 is not allowed."],
    ["another endpoint's URL", ({ own }) => [own, { url: "https://198.51.100.44/Taken/", choice: "all", description: "" }], 409, "is already endpoint"],
    ["no event type ticked", ({ own }) => [own, { url: "https://198.51.100.43/own", choice: "some", description: "" }], 400,
      "Pick at least one event type, or choose every event type"],
    ["another organization's endpoint", ({ foreign }) => [foreign, { url: "https://198.51.100.45/b", choice: "all", description: "mine" }], 404, "Page not found"],
    ["a local listener's endpoint", ({ listener }) => [listener, { url: "https://198.51.100.46/listener", choice: "all", description: "mine" }], 409,
      "platter listen sets its URL"],
  ])("refuses %s and writes nothing", async (_case, change, status, text) => {
    const own = await added(a, "https://198.51.100.43/own");
    const taken = await added(a, "https://198.51.100.44/taken");
    const foreign = await added(b, "https://198.51.100.45/b");
    const listener = await added(a, "https://198.51.100.46/listener");
    await rows("update webhook_endpoints set listener_key_id = ? where id = ?", [a.writeKeyId, listener]);
    const [id, fields] = change({ own, taken, foreign, listener });
    const before = await snapshot();
    const response = await editForm(id, fields);
    expect(response.status).toBe(status);
    expect(await response.text()).toContain(text);
    expect(await snapshot()).toEqual(before);
    await rows("delete from webhook_endpoints where id in (?, ?, ?, ?)", [own, taken, foreign, listener]);
  });
});

describe("the limit on endpoint changes", () => {
  it("counts edits under endpointChanges, and a refused form gives its count back", async () => {
    const limited = await startArea(inject("pgAdminUrl"), "'self'", {
      allowPrivateNetworks: false, limits: { ...DEFAULT_DEVELOPER_AREA_LIMITS, endpointChanges: 2 },
    });
    try {
      const org = await createOrganization(limited.db, "Limited edits");
      const mine = await signIn(limited, await limited.link(org.id));
      const { id } = await limited.db.run(WebhookEndpointRepository.use((all) => all.add(org.scope, "https://198.51.100.47/x", [], generateSigningSecret())));
      const edit = (description: string) =>
        postForm(limited, `/webhooks/${id}/edit`, { form_token: mine.formToken, url: "https://198.51.100.47/x", choice: "all", description }, { cookie: mine.cookie });
      expect((await edit("x".repeat(501))).status).toBe(400);
      expect((await edit("one")).status).toBe(303);
      expect((await edit("two")).status).toBe(303);
      expect((await edit("three")).status).toBe(429);
      expect((await limited.db.orm.em.getConnection().execute("select description from webhook_endpoints where id = ?", [id]))[0]).toEqual({ description: "two" });
    } finally {
      await limited.stop();
    }
  });
});
