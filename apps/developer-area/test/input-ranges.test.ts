import { Seeding } from "@platter/seeds";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_DEVELOPER_AREA_LIMITS } from "../src/index.ts";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * Times and days out of the accepted years (`ACCEPTED_YEARS`, 1900 to 9998) in the Developer
 * area's filters and forms: a 400 page naming the field, never a 500 from PostgreSQL (which reads
 * neither year 0000 nor `+010000-…`), and a refused replay form spends none of the organization's
 * replays.
 */

let area: RunningArea;
let a: OrganizationFixture;
let session: TestSession;
let endpointId: number;
let envelopeId: string;
beforeAll(async () => {
  // One replay per window: a refused form that spent it would leave the next valid one a 429.
  area = await startArea(inject("pgAdminUrl"), "'self'", { limits: { ...DEFAULT_DEVELOPER_AREA_LIMITS, replays: 1 } });
  a = await createOrganization(area.db, "Ranges");
  await area.db.run(Seeding.deliveryLog(a.scope, { deliveries: 4, endpoints: 1 }));
  const [row] = await area.db.orm.em.getConnection().execute<Array<{ endpoint_id: string; envelope_id: string }>>(
    `select d.endpoint_id, m.envelope_id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
     where d.organization_id = ? order by d.id limit 1`,
    [a.id],
  );
  endpointId = Number(row!.endpoint_id);
  envelopeId = row!.envelope_id;
  session = await signIn(area, await area.link(a.id));
});
afterAll(() => area?.stop());

const get = (path: string) => fetch(area.origin + path, { headers: { cookie: session.cookie }, redirect: "manual" });
const post = (path: string, fields: Record<string, string>) => postForm(area, path, { form_token: session.formToken, ...fields }, { cookie: session.cookie });

describe("a filter out of the accepted years", () => {
  it.each([
    ["/deliveries?from=0000-01-01T00:00", "from must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["/deliveries?to=9999-12-31T23:59", "to must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["/requests?from=0000-01-01T00:00", "from must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["/requests?to=1899-12-31T23:59", "to must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["/audit-log?from=0000-01-01", "from must be a date between 1900-01-01 and 9998-12-31"],
    ["/audit-log?to=9999-12-31", "to must be a date between 1900-01-01 and 9998-12-31"],
  ])("%s is a 400 page naming the field", async (path, message) => {
    const response = await get(path);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await response.text()).toContain(message);
  });

  it.each([
    ["/deliveries?from=1900-01-01T00:00&to=9998-12-31T23:59"],
    ["/requests?from=1900-01-01T00:00&to=9998-12-31T23:59"],
    ["/audit-log?from=1900-01-01&to=9998-12-31"],
  ])("%s, the accepted years' ends, is read", async (path) => {
    expect((await get(path)).status).toBe(200);
  });
});

describe("a replay form that is refused", () => {
  it.each([
    ["a since in year 0000", "/deliveries/replay-failed", () => ({ endpoint: String(endpointId), since: "0000-01-01T00:00" }), 400,
      "since must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["a since past the accepted years", "/deliveries/replay-failed", () => ({ endpoint: String(endpointId), since: "9999-12-31T23:59" }), 400,
      "since must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["a delivery that is not an id", "/deliveries/ENVELOPE/replay", () => ({ delivery: "0" }), 404, "<h1>Page not found</h1>"],
  ])("(%s) spends none of the organization's replays", async (_case, path, fields, status, says) => {
    const refused = await post(path.replace("ENVELOPE", envelopeId), fields());
    expect(refused.status).toBe(status);
    expect(await refused.text()).toContain(says);
  });

  it("leaves the one replay of the window to the next valid form", async () => {
    const replayed = await post("/deliveries/replay-failed", { endpoint: String(endpointId), since: "1900-01-01T00:00" });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get("location")).toMatch(new RegExp(`^/deliveries\\?endpoint=${endpointId}&replayed=\\d+$`));
    // And that one was counted: the next is over the limit.
    expect((await post("/deliveries/replay-failed", { endpoint: String(endpointId), since: "1900-01-01T00:00" })).status).toBe(429);
  });
});
