import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * A change and its audit row are written in one transaction: when PostgreSQL refuses the audit row
 * (here a trigger of the test's own makes every insert into the audit log fail), the change is not
 * made either, and nobody is shown a secret that does not exist. Once the log takes rows again,
 * the same changes go through, each with its row.
 */

let area: RunningArea;
let org: OrganizationFixture;
let session: TestSession;
let endpoint: { id: number; secret: string };
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { allowPrivateNetworks: false });
  org = await createOrganization(area.db, "Audited Catering");
  session = await signIn(area, await area.link(org.id));
  endpoint = await area.db.run(WebhookEndpointRepository.use((all) => all.add(org.scope, "https://198.51.100.30/audited", [], generateSigningSecret())));
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const post = (path: string, fields: Record<string, string> = {}) =>
  postForm(area, path, { form_token: session.formToken, ...fields }, { cookie: session.cookie });

/** Everything the changes below could write. */
const state = async () =>
  (await rows<Record<string, unknown>>(
    `select (select count(*)::int from api_keys) as keys, (select count(*)::int from webhook_endpoints) as endpoints,
       (select count(*)::int from webhook_messages) as messages, (select count(*)::int from audit_log) as audit,
       (select json_agg(json_build_object('enabled', enabled, 'secret', secret, 'throttle', throttle_per_second) order by id) from webhook_endpoints) as endpoint_rows`,
  ))[0];

/** Each change, and its status once the audit log takes rows again. */
const CHANGES: ReadonlyArray<readonly [string, () => Promise<Response>, number]> = [
  ["creating an API key", () => post("/api-keys", { name: "Never made", access: "read" }), 201],
  ["adding an endpoint", () => post("/webhooks", { url: "https://198.51.100.31/hook", choice: "all" }), 303],
  ["revealing a secret", () => post(`/webhooks/${endpoint.id}/secret`), 200],
  ["rotating a secret", () => post(`/webhooks/${endpoint.id}/rotate`), 200],
  ["sending a test event", () => post(`/webhooks/${endpoint.id}/test`, { type: "event.created" }), 303],
  ["throttling an endpoint", () => post(`/webhooks/${endpoint.id}/throttle`, { per_second: "5" }), 303],
  ["disabling an endpoint", () => post(`/webhooks/${endpoint.id}/disable`), 303],
];

describe("a change whose audit row cannot be written", () => {
  it.each(CHANGES)("%s changes nothing and shows no secret", async (_name, change) => {
    const before = await state();
    await rows(`create function refuse_audit() returns trigger language plpgsql as $$ begin raise exception 'audit log refused'; end $$;
      create trigger refuse_audit before insert on audit_log for each row execute function refuse_audit()`);
    try {
      const response = await change();
      expect(response.status).toBe(500);
      const page = await response.text();
      expect(page).not.toMatch(/platter_r[ow]_[0-9a-f]{64}|whsec_/);
      expect(await state()).toEqual(before);
    } finally {
      await rows("drop trigger refuse_audit on audit_log; drop function refuse_audit()");
    }
  });

  it.each(CHANGES)("%s goes through with its audit row once the log takes rows again", async (_name, change, status) => {
    const { audit } = (await state()) as { audit: number };
    const response = await change();
    expect(response.status).toBe(status);
    expect(((await state()) as { audit: number }).audit).toBe(audit + 1);
  });
});
