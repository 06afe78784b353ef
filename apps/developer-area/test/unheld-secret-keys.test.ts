import { endpointSecretContext, generateSecretKey, generateSigningSecret, makeSecretCipher } from "@platter/domain";
import { LocalListeners, WebhookEndpointRepository } from "@platter/persistence";
import { Effect } from "effect";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * Secrets sealed with a key this server does not hold (a process elsewhere had a key first that
 * this one lacks, mid-rotation): revealing or rotating such an endpoint's secret answers 503 with a
 * page saying so and what the operator must do, changing nothing; a `platter listen` whose
 * listener's secret is such answers 503 JSON saying so. Every other endpoint and listener works on.
 */

const FORWARD_TO = "http://localhost:4000/hook";
const UNHELD = /sealed with key &quot;elsewhere&quot;, which this server does not hold|sealed with key "elsewhere", which this server does not hold/;

let area: RunningArea;
let org: OrganizationFixture;
let session: TestSession;
let unheld: { id: number; secret: string };
let held: { id: number; secret: string };
const elsewhere = makeSecretCipher([generateSecretKey("elsewhere").key]);

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
/** Seals endpoint `id`'s secret with the key only "elsewhere" holds, as a process with that key first would have. */
const sealElsewhere = (id: number, secret: string) =>
  rows("update webhook_endpoints set secret = ? where id = ?", [elsewhere.seal(secret, endpointSecretContext(org.id, id)), id]);

beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { listenersPerOrganization: 5 });
  org = await createOrganization(area.db, "Unkeyed Caterers");
  session = await signIn(area, await area.link(org.id));
  [unheld, held] = await area.db.run(WebhookEndpointRepository.use((endpoints) =>
    Effect.all([endpoints.add(org.scope, "https://203.0.113.30/unheld", [], generateSigningSecret()), endpoints.add(org.scope, "https://203.0.113.31/held", [], generateSigningSecret())])));
  await sealElsewhere(unheld.id, unheld.secret);
});
afterAll(() => area?.stop());

const post = (path: string) => postForm(area, path, { form_token: session.formToken }, { cookie: session.cookie });
const storedSecret = async (id: number) => (await rows<{ secret: string }>("select secret from webhook_endpoints where id = ?", [id]))[0]!.secret;
const auditCount = async (id: number) =>
  (await rows<{ n: number }>("select count(*)::int as n from audit_log where subject = ?", [`webhook_endpoint ${id}`]))[0]!.n;

describe("an endpoint whose secret is sealed with a key this server lacks, in the Developer area", () => {
  it.each([
    ["revealing", "secret"],
    ["rotating", "rotate"],
  ])("%s it answers 503 saying which key the operator must configure, and changes nothing", async (_, action) => {
    const before = { secret: await storedSecret(unheld.id), audit: await auditCount(unheld.id) };
    const response = await post(`/webhooks/${unheld.id}/${action}`);
    expect(response.status).toBe(503);
    const page = await response.text();
    expect(page).toMatch(UNHELD);
    expect(page).toContain("SECRET_ENCRYPTION_KEYS");
    expect(page).not.toContain("Something went wrong");
    expect({ secret: await storedSecret(unheld.id), audit: await auditCount(unheld.id) }).toEqual(before);
  });

  it("reveals and rotates every other endpoint's secret as before", async () => {
    const revealed = await post(`/webhooks/${held.id}/secret`);
    expect(revealed.status).toBe(200);
    expect(await revealed.text()).toContain(`value="${held.secret}"`);
    const rotated = await post(`/webhooks/${held.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(await rotated.text()).toContain("The signing secret was rotated");
  });
});

describe("a local listener whose secret is sealed with a key this server lacks", () => {
  const listen = (key: string, signal?: AbortSignal) =>
    fetch(`${area.origin}/cli/listen?forward_to=${encodeURIComponent(FORWARD_TO)}`, {
      headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" }, ...(signal === undefined ? {} : { signal }),
    });

  it("is refused with a 503 JSON error saying so, while another key's listener opens", async () => {
    const other = await createOrganization(area.db, "Listening Caterers");
    const opened = await area.db.run(LocalListeners.use((listeners) =>
      listeners.open({ ...org.scope, apiKeyId: org.writeKeyId }, { forwardTo: FORWARD_TO, eventTypes: [] }, 1, 5)));
    await sealElsewhere(opened.id, opened.secret);
    const refused = await listen(org.writeKey);
    expect(refused.status).toBe(503);
    const body = (await refused.json()) as { error: string };
    expect(body.error).toMatch(UNHELD);
    expect(body.error).toContain("SECRET_ENCRYPTION_KEYS");
    const [row] = await rows<{ listening: boolean }>("select coalesce(listening_until > now(), false) as listening from webhook_endpoints where id = ?", [opened.id]);
    expect(row!.listening).toBe(false);

    const controller = new AbortController();
    const working = await listen(other.writeKey, controller.signal);
    try {
      expect(working.status).toBe(200);
      const reader = working.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes("\n\n")) {
        const read = await reader.read();
        expect(read.done).toBe(false);
        text += read.value;
      }
      expect(text).toMatch(/^event: ready\ndata: \{"listener_id":\d+,"secret":"whsec_/);
    } finally {
      controller.abort();
    }
  });
});
