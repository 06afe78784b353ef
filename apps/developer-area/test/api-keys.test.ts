import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { ApiKeyRepository } from "@platter/persistence";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * The API keys page over HTTP: create (the secret shown once, uncached), list, revoke after a
 * confirmation, each change audited with the session and its link; names rendered as text; and
 * one organization's session never reaching another's keys.
 */

let area: RunningArea;
let a: OrganizationFixture;
let b: OrganizationFixture;
let session: TestSession;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  a = await createOrganization(area.db, "Keys of A Catering");
  b = await createOrganization(area.db, "Keys of B Catering");
  session = await signIn(area, await area.link(a.id));
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const getPage = (path: string) => fetch(area.origin + path, { headers: { cookie: session.cookie }, redirect: "manual" });
const create = (name: string, access: string, expires?: string) =>
  postForm(area, "/api-keys", { form_token: session.formToken, name, access, ...(expires === undefined ? {} : { expires }) }, { cookie: session.cookie });
const secretIn = (page: string) => /id="new-key"[^>]*value="(platter_r[ow]_[0-9a-f]{64})"/.exec(page)?.[1];

describe("creating a key", () => {
  it("shows the secret once, uncached, with a copy button, and audits it with the session's link", async () => {
    const response = await create("Website booking form", "read");
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const page = await response.text();
    const secret = secretIn(page);
    expect(secret).toMatch(/^platter_ro_/);
    expect(page).toContain('data-copy-from="new-key"');
    expect(page).toContain("it cannot be shown again");
    const { scope } = await area.db.run(ApiKeyRepository.use((keys) => keys.authenticate(secret!)));
    expect(scope.organizationId).toBe(a.id);
    const [key] = await rows<{ id: string; name: string; access: string }>("select id, name, access from api_keys where key_hash = encode(sha256(?::bytea), 'hex')", [secret]);
    expect(key).toMatchObject({ name: "Website booking form", access: "read" });
    const [audit] = await rows<{ action: string; subject: string; organization_id: string; session_id: string; link_id: string }>(
      "select a.action, a.subject, a.organization_id, a.session_id, a.link_id from audit_log a order by a.id desc limit 1",
    );
    expect(audit).toMatchObject({ action: "api_key.created", subject: `api_key ${key!.id}`, organization_id: String(a.id) });
    const [link] = await rows<{ link_id: string }>("select link_id from developer_sessions where id = ?", [audit!.session_id]);
    expect(link!.link_id).toBe(audit!.link_id);
    // The list shows the key by name and prefix, never the secret.
    const list = await (await getPage("/api-keys")).text();
    expect(list).toContain("Website booking form");
    expect(list).toContain(secret!.slice(0, 19));
    expect(list).not.toContain(secret!);
  });

  it("renders a name of markup as text", async () => {
    const name = "<script>alert(1)</script>";
    const created = await create(name, "read_write");
    expect(created.status).toBe(201);
    const createdPage = await created.text();
    const list = await (await getPage("/api-keys")).text();
    for (const page of [createdPage, list]) {
      expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
      expect(page).not.toContain("<script>alert(1)");
    }
  });

  it.each([
    ["an empty name", "", "read", "name", "Give the key a name"],
    ["a blank name", "   ", "read", "name", "Give the key a name"],
    ["a name of 101 characters", "n".repeat(101), "read", "name", "A name may be at most 100 characters"],
    ["a control character", "tab\there", "read", "name", "A name may not contain control characters"],
    ["an unknown access", "Fine name", "admin", "access", "Choose read-only or read/write access"],
    ["no access", "Fine name", "", "access", "Choose read-only or read/write access"],
  ])("refuses %s with 400, says why under the field concerned, and creates nothing", async (_case, name, access, field, message) => {
    const before = await rows("select count(*)::int as n from api_keys");
    const response = await create(name, access);
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).toContain(`<p class="field-error" id="key-${field}-error">${message}</p>`);
    // The name is marked invalid only when it is the name that is wrong; the access error sits in its fieldset.
    expect(/id="key-name"[^>]*aria-invalid="true"/.test(page)).toBe(field === "name");
    expect(/<fieldset class="field" aria-describedby="key-access-error">[\s\S]*id="key-access-error"[\s\S]*<\/fieldset>/.test(page)).toBe(field === "access");
    expect(await rows("select count(*)::int as n from api_keys")).toEqual(before);
  });

  it("says what is wrong with both fields at once", async () => {
    const page = await (await create("", "admin")).text();
    expect(page).toContain('id="key-name-error">Give the key a name</p>');
    expect(page).toContain('id="key-access-error">Choose read-only or read/write access</p>');
  });

  it("accepts a name of 100 characters, emoji counted as one", async () => {
    const response = await create("🍰".repeat(100), "read");
    expect(response.status).toBe(201);
  });
});

describe("a key's expiry", () => {
  it("is chosen at creation, stored on the database's clock and shown on the keys page", async () => {
    const response = await create("Expires in a month", "read", "30d");
    expect(response.status).toBe(201);
    const [key] = await rows<{ id: string; days: number }>(
      "select id, round(extract(epoch from expires_at - now()) / 86400)::int as days from api_keys where name = 'Expires in a month'",
    );
    expect(key!.days).toBe(30);
    const list = await (await getPage("/api-keys")).text();
    expect(list).toMatch(/<span class="hint">expires<\/span> <time datetime="\d{4}-/);
    expect(list).toContain('<option value="365d">In a year</option>');
  });

  it.each([["an unknown lifetime", "42d"], ["an empty lifetime", ""]])("refuses %s with 400 and creates nothing", async (_case, expires) => {
    const before = await rows("select count(*)::int as n from api_keys");
    const response = await create("Fine name", "read", expires);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('<p class="field-error" id="key-expires-error">Choose when the key expires</p>');
    expect(await rows("select count(*)::int as n from api_keys")).toEqual(before);
  });
});

describe("rolling a key", () => {
  it("asks how long the old key keeps working, then shows the new secret once and audits the roll", async () => {
    const old = await area.db.run(ApiKeyRepository.use((keys) => keys.create(a.scope, "read_write", "To be rolled")));
    const confirm = await getPage(`/api-keys/${old.id}/roll`);
    expect(confirm.status).toBe(200);
    const form = await confirm.text();
    expect(form).toContain('name="overlap" value="24h" checked');
    const rolled = await postForm(area, `/api-keys/${old.id}/roll`, { form_token: session.formToken, overlap: "1h" }, { cookie: session.cookie });
    expect(rolled.status).toBe(201);
    const page = await rolled.text();
    const secret = secretIn(page);
    expect(secret).toMatch(/^platter_rw_/);
    expect(page).toContain("keeps working until");
    expect(await area.db.run(ApiKeyRepository.use((keys) => keys.authenticate(secret!)))).toMatchObject({ scope: { organizationId: a.id } });
    expect(await area.db.run(ApiKeyRepository.use((keys) => keys.authenticate(old.key)))).toMatchObject({ scope: { organizationId: a.id } });
    const [row] = await rows<{ hours: number; replaced_by: string | null }>(
      "select round(extract(epoch from expires_at - now()) / 3600)::int as hours, replaced_by from api_keys where id = ?", [old.id],
    );
    expect(row!.hours).toBe(1);
    expect(row!.replaced_by).not.toBeNull();
    expect(await rows("select action from audit_log where subject = ? and session_id is not null", [`api_key ${old.id}`])).toEqual([{ action: "api_key.rolled" }]);
    // A rolled key cannot be rolled again: its confirmation page leads back to the list.
    expect((await getPage(`/api-keys/${old.id}/roll`)).headers.get("location")).toBe("/api-keys");
    const list = await (await getPage("/api-keys")).text();
    expect(list).toContain("works until");
  });

  it.each([["an unknown overlap", "3d"], ["no overlap", ""]])("refuses %s with 400 and changes nothing", async (_case, overlap) => {
    const key = await area.db.run(ApiKeyRepository.use((keys) => keys.create(a.scope, "read", "Not rolled")));
    const before = await rows("select count(*)::int as keys, (select count(*)::int from audit_log) as audit from api_keys");
    const response = await postForm(area, `/api-keys/${key.id}/roll`, { form_token: session.formToken, overlap }, { cookie: session.cookie });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('id="roll-overlap-error">Choose how long the old key keeps working</p>');
    expect(await rows("select count(*)::int as keys, (select count(*)::int from audit_log) as audit from api_keys")).toEqual(before);
  });

  it("cannot roll another organization's key: a 404 page, and nothing changes", async () => {
    expect((await getPage(`/api-keys/${b.readKeyId}/roll`)).status).toBe(404);
    const response = await postForm(area, `/api-keys/${b.readKeyId}/roll`, { form_token: session.formToken, overlap: "0" }, { cookie: session.cookie });
    expect(response.status).toBe(404);
    expect(await rows("select expires_at, replaced_by from api_keys where id = ?", [b.readKeyId])).toEqual([{ expires_at: null, replaced_by: null }]);
  });
});

describe("revoking a key", () => {
  it("asks for confirmation, then revokes at once and audits it", async () => {
    const secret = secretIn(await (await create("Short-lived", "read")).text())!;
    const [{ id }] = (await rows<{ id: string }>("select id from api_keys where name = 'Short-lived'")) as [{ id: string }];
    const confirm = await getPage(`/api-keys/${id}/revoke`);
    expect(confirm.status).toBe(200);
    const confirmPage = await confirm.text();
    expect(confirmPage).toContain("Revoke this key?");
    expect(confirmPage).toContain(`action="/api-keys/${id}/revoke"`);
    // Seeing the confirmation changes nothing.
    expect(await area.db.run(ApiKeyRepository.use((keys) => keys.authenticate(secret)))).toMatchObject({ scope: { organizationId: a.id } });

    const revoked = await postForm(area, `/api-keys/${id}/revoke`, { form_token: session.formToken }, { cookie: session.cookie });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get("location")).toBe(`/api-keys?revoked=${id}`);
    await expect(area.db.run(ApiKeyRepository.use((keys) => keys.authenticate(secret)))).rejects.toMatchObject({ _tag: "Unauthenticated" });
    const list = await (await getPage(`/api-keys?revoked=${id}`)).text();
    expect(list).toContain("Short-lived was revoked: the API refuses it from now on.");
    expect(list).not.toContain(`href="/api-keys/${id}/revoke"`);
    expect(await rows("select action, subject from audit_log where subject = ? order by id", [`api_key ${id}`])).toEqual([
      { action: "api_key.created", subject: `api_key ${id}` },
      { action: "api_key.revoked", subject: `api_key ${id}` },
    ]);

    // Revoking it again (an old page, a second click) changes nothing, so nothing more is recorded.
    const [{ revoked_at }] = (await rows<{ revoked_at: string }>("select revoked_at::text from api_keys where id = ?", [id])) as [{ revoked_at: string }];
    const again = await postForm(area, `/api-keys/${id}/revoke`, { form_token: session.formToken }, { cookie: session.cookie });
    expect(again.status).toBe(303);
    expect(await rows("select revoked_at::text from api_keys where id = ?", [id])).toEqual([{ revoked_at }]);
    expect(await rows("select count(*)::int as n from audit_log where subject = ?", [`api_key ${id}`])).toEqual([{ n: 2 }]);
  });
});

describe("another organization's keys", () => {
  it("are not listed", async () => {
    const list = await (await getPage("/api-keys")).text();
    const prefixes = await rows<{ display_prefix: string; organization_id: string }>("select display_prefix, organization_id from api_keys");
    for (const key of prefixes.filter((row) => row.organization_id === String(b.id))) expect(list).not.toContain(key.display_prefix);
    expect(prefixes.filter((row) => row.organization_id === String(a.id)).every((key) => list.includes(key.display_prefix))).toBe(true);
    expect(list).not.toContain("Keys of B Catering");
  });

  it.each([
    ["B's key", () => b.readKeyId],
    ["a key that does not exist", () => 987_654_321],
  ])("%s cannot be confirmed or revoked: a 404 page, and nothing changes", async (_case, id) => {
    expect((await getPage(`/api-keys/${id()}/revoke`)).status).toBe(404);
    const revoke = await postForm(area, `/api-keys/${id()}/revoke`, { form_token: session.formToken }, { cookie: session.cookie });
    expect(revoke.status).toBe(404);
    expect(await area.db.run(ApiKeyRepository.use((keys) => keys.authenticate(b.readKey)))).toMatchObject({ scope: { organizationId: b.id } });
    expect(await rows("select count(*)::int as n from audit_log where subject = ?", [`api_key ${id()}`])).toEqual([{ n: 0 }]);
  });
});
