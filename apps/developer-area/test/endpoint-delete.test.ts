import { generateSigningSecret } from "@platter/domain";
import { LocalListeners, WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * Deleting an endpoint over HTTP: the confirmation page, the POST (redirect to the Webhooks page,
 * audited), and then every page and action of the deleted endpoint a 404; another organization's
 * endpoint a 404 that deletes nothing; a local listener refused (409, said on the confirmation
 * page); a POST without the form's token refused before anything is deleted.
 */

let area: RunningArea;
let a: OrganizationFixture;
let b: OrganizationFixture;
let session: TestSession;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  a = await createOrganization(area.db, "Deletes of A");
  b = await createOrganization(area.db, "Deletes of B");
  session = await signIn(area, await area.link(a.id));
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const getPage = (path: string) => fetch(area.origin + path, { headers: { cookie: session.cookie }, redirect: "manual" });
const post = (path: string, fields: Record<string, string> = {}) =>
  postForm(area, path, { form_token: session.formToken, ...fields }, { cookie: session.cookie });
const endpointOf = (org: OrganizationFixture, url: string) =>
  area.db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, url, [], generateSigningSecret())));
const deletedAt = async (id: number) => (await rows<{ deleted_at: string | null }>("select deleted_at from webhook_endpoints where id = ?", [id]))[0]!.deleted_at;

describe("deleting an endpoint in the Developer area", () => {
  it("confirms first, then deletes it, audited, and sends the browser to the Webhooks page saying so", async () => {
    const { id } = await endpointOf(a, "https://198.51.100.60/<b>confirm</b>");
    const confirm = await getPage(`/webhooks/${id}/delete`);
    expect(confirm.status).toBe(200);
    const page = await confirm.text();
    expect(page).toContain("<h1>Delete this endpoint?</h1>");
    expect(page).toContain("https://198.51.100.60/&lt;b&gt;confirm&lt;/b&gt;");
    expect(page).toContain(`action="/webhooks/${id}/delete"`);
    // Showing the confirmation deletes nothing.
    expect(await deletedAt(id)).toBeNull();

    const deleted = await post(`/webhooks/${id}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get("location")).toBe("/webhooks?done=deleted");
    expect(await deletedAt(id)).not.toBeNull();
    expect(await rows("select action from audit_log where subject = ?", [`webhook_endpoint ${id}`])).toEqual([{ action: "webhook_endpoint.deleted" }]);
    const list = await getPage("/webhooks?done=deleted");
    expect(list.status).toBe(200);
    const listed = await list.text();
    expect(listed).toContain("Endpoint deleted: nothing more is sent to it");
    expect(listed).not.toContain("198.51.100.60");
  });

  it.each([
    ["GET", "/webhooks/ID"],
    ["GET", "/webhooks/ID/delete"],
    ["GET", "/webhooks/ID/rotate"],
    ["POST", "/webhooks/ID/delete"],
    ["POST", "/webhooks/ID/enable"],
    ["POST", "/webhooks/ID/disable"],
    ["POST", "/webhooks/ID/secret"],
    ["POST", "/webhooks/ID/rotate"],
  ])("answers %s %s of a deleted endpoint with the 404 page, changing nothing", async (method, path) => {
    const { id } = await endpointOf(a, `https://198.51.100.61/${method}${path.replaceAll("/", "-")}`);
    expect((await post(`/webhooks/${id}/delete`)).status).toBe(303);
    const before = await rows("select to_jsonb(w) as row from webhook_endpoints w where id = ?", [id]);
    const target = path.replace("ID", String(id));
    const response = method === "GET" ? await getPage(target) : await post(target);
    expect(response.status).toBe(404);
    expect(await rows("select to_jsonb(w) as row from webhook_endpoints w where id = ?", [id])).toEqual(before);
  });

  it("answers a test event to a deleted endpoint with the 404 page", async () => {
    const { id } = await endpointOf(a, "https://198.51.100.62/test-after-delete");
    expect((await post(`/webhooks/${id}/delete`)).status).toBe(303);
    expect((await post(`/webhooks/${id}/test`, { type: "event.created" })).status).toBe(404);
    expect(await rows("select id from webhook_deliveries where endpoint_id = ?", [id])).toEqual([]);
  });

  it("answers another organization's endpoint with the 404 page, and deletes nothing", async () => {
    const { id } = await endpointOf(b, "https://198.51.100.63/b-only");
    expect((await getPage(`/webhooks/${id}/delete`)).status).toBe(404);
    expect((await post(`/webhooks/${id}/delete`)).status).toBe(404);
    expect(await deletedAt(id)).toBeNull();
  });

  it("refuses a local listener (409, said on the confirmation page), and deletes nothing", async () => {
    const listener = await area.db.run(LocalListeners.use((l) =>
      l.open({ ...a.scope, apiKeyId: a.writeKeyId }, { forwardTo: "http://localhost:4000/hook", eventTypes: [] }, 60_000, 5)));
    const refused = await post(`/webhooks/${listener.id}/delete`);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("This is a local listener of `platter listen`: it goes with its API key.");
    expect(await deletedAt(listener.id)).toBeNull();
  });

  it("refuses a POST without the form's token before deleting anything", async () => {
    const { id } = await endpointOf(a, "https://198.51.100.64/csrf");
    const forged = await postForm(area, `/webhooks/${id}/delete`, {}, { cookie: session.cookie });
    expect(forged.status).toBe(403);
    expect(await deletedAt(id)).toBeNull();
  });
});
