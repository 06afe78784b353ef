import Router from "@koa/router";
import { createOrganization, createSandbox, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_DEVELOPER_AREA_LIMITS, type DeveloperAreaLimits } from "../src/config.ts";
import { declareRouteLimit, postRouteLimits, unlimited } from "../src/organization-limits.ts";
import { cookiePair, formTokenIn, postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * Every action that makes work is counted, by construction: each POST route of the area and of the
 * CLI names its per-organization limit where it is registered (or says why it needs none), and the
 * registration counts it before the route's work. Past a limit the action is the "too many" page
 * (429) and changes nothing; a refused form is not counted; one organization at its limit leaves
 * another its own allowance.
 */

const LIMITS: DeveloperAreaLimits = {
  ...DEFAULT_DEVELOPER_AREA_LIMITS, testEvents: 3, keyChanges: 3, endpointChanges: 3, sandboxResets: 2, sandboxSwitches: 2,
};

let area: RunningArea;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { allowPrivateNetworks: false, limits: LIMITS, apiKeysPerOrganization: 4 });
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const post = (session: TestSession, path: string, fields: Record<string, string> = {}) =>
  postForm(area, path, { form_token: session.formToken, ...fields }, { cookie: session.cookie });
const cliTrigger = (key: string, type: string) =>
  fetch(`${area.origin}/cli/trigger`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ type }),
  });

/** Every row an action of organization `id` could write (its sandbox's demo data, webhooks, keys, sessions, links, audit). */
const written = async (id: number) =>
  (await rows<Record<string, number>>(
    `select ${["clients", "events", "webhook_messages", "webhook_deliveries", "webhook_endpoints", "api_keys", "developer_sessions",
      "developer_sign_in_links", "audit_log"].map((table) => `(select count(*)::int from ${table} where organization_id = ?) as ${table}`).join(", ")},
      (select count(*)::int from webhook_endpoints where organization_id = ? and enabled) as enabled_endpoints`,
    Array.from({ length: 10 }, () => id),
  ))[0]!;

/** Asserts `refused` is the area's "too many" page for `what`, leading back to `back`. */
const expectTooMany = async (refused: Response, what: string, allowed: number, back: string) => {
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  const page = await refused.text();
  expect(page).toContain(`<h1>Too many ${what} for now</h1>`);
  expect(page).toContain(`Your organization may make ${allowed} ${what} every 10 minutes, and has. Nothing was done.`);
  expect(page).toContain(`href="${back}"`);
};

/** A live organization and a session of it. */
const liveOrganization = async (name: string): Promise<{ org: OrganizationFixture; session: TestSession }> => {
  const org = await createOrganization(area.db, name);
  return { org, session: await signIn(area, await area.link(org.id)) };
};

describe("the POST routes", () => {
  it("each name their limit where they are registered, or why they need none", () => {
    const routes = area.postRoutes();
    expect(routes.filter((route) => route.limit === undefined)).toEqual([]);
    const declared = Object.fromEntries(routes.map(({ path, limit }) => [path, limit?.kind === "limited" ? limit.action : limit?.kind]));
    expect(declared).toEqual({
      "/sign-in/:token": "unlimited",
      "/sign-out": "unlimited",
      "/api-keys": "keyChanges",
      "/api-keys/:id/roll": "keyChanges",
      "/api-keys/:id/revoke": "unlimited",
      "/webhooks": "endpointCreates",
      "/webhooks/:id/edit": "endpointChanges",
      "/webhooks/:id/secret": "endpointChanges",
      "/webhooks/:id/rotate": "endpointChanges",
      "/webhooks/:id/enable": "endpointChanges",
      "/webhooks/:id/disable": "endpointChanges",
      "/webhooks/:id/throttle": "endpointChanges",
      "/webhooks/:id/delete": "endpointChanges",
      "/webhooks/:id/test": "testEvents",
      "/deliveries/replay-failed": "replays",
      "/deliveries/:envelopeId/replay": "replays",
      "/sessions/end-others": "unlimited",
      "/sessions/:id/end": "unlimited",
      "/sandbox/create": "sandboxResets",
      "/sandbox/switch": "sandboxSwitches",
      "/sandbox/trigger": "testEvents",
      "/sandbox/reset": "sandboxResets",
      "/alerts": "alertAddresses",
      "/alerts/:id/remove": "unlimited",
      "/alerts/confirm/:token": "unlimited",
      "/cli/alerts": "alertAddresses",
      "/cli/alerts/:id/remove": "unlimited",
      "/cli/listen/attempts": "unlimited",
      "/cli/trigger": "testEvents",
    });
    // Each route that needs no limit says why.
    const reasons = routes.flatMap(({ limit }) => (limit?.kind === "unlimited" ? [limit.reason] : []));
    expect(reasons.filter((reason) => reason.length < 30)).toEqual([]);
  });

  it("are read from the router itself: a POST added without a declaration is listed without a limit", () => {
    const router = new Router();
    declareRouteLimit(router, "/declared", unlimited("a route of this test that declares it needs no limit"));
    router.post("/declared", () => undefined);
    router.post("/undeclared", () => undefined);
    router.get("/page", () => undefined);
    expect(postRouteLimits(router).map(({ path, limit }) => [path, limit?.kind])).toEqual([["/declared", "unlimited"], ["/undeclared", undefined]]);
  });
});

describe("the Sandbox's Trigger", () => {
  let live: OrganizationFixture;
  let sandbox: OrganizationFixture;
  let session: TestSession;
  beforeAll(async () => {
    live = await createOrganization(area.db, "Trigger Live");
    sandbox = await createSandbox(area.db, live);
    session = await signIn(area, await area.link(sandbox.id));
  });

  it("counts as a test event: a refused form is not counted, and the one past DEVELOPER_AREA_TEST_EVENTS is refused with 429, writing nothing", async () => {
    for (const type of ["invoice.void", ""]) expect((await post(session, "/sandbox/trigger", { type })).status).toBe(400);
    for (const _ of [1, 2, 3]) expect((await post(session, "/sandbox/trigger", { type: "client.created" })).status).toBe(303);
    const before = await written(sandbox.id);
    await expectTooMany(await post(session, "/sandbox/trigger", { type: "client.created" }), "test events", 3, "/sandbox");
    // `platter trigger` shares the allowance.
    const fromCli = await cliTrigger(sandbox.writeKey, "client.created");
    expect(fromCli.status).toBe(429);
    expect(await written(sandbox.id)).toEqual(before);
  });

  it("leaves another organization its own allowance", async () => {
    const other = await createSandbox(area.db, await createOrganization(area.db, "Trigger Other"));
    const otherSession = await signIn(area, await area.link(other.id));
    for (const _ of [1, 2, 3]) expect((await post(otherSession, "/sandbox/trigger", { type: "event.created" })).status).toBe(303);
    expect((await post(session, "/sandbox/trigger", { type: "event.created" })).status).toBe(429);
  });
});

describe("the Sandbox's reset and switch", () => {
  it("refuse the reset past DEVELOPER_AREA_SANDBOX_RESETS with 429, writing nothing, and leave another sandbox its own", async () => {
    const sandbox = await createSandbox(area.db, await createOrganization(area.db, "Reset Live"));
    const session = await signIn(area, await area.link(sandbox.id));
    for (const _ of [1, 2]) expect((await post(session, "/sandbox/reset")).status).toBe(303);
    const before = await written(sandbox.id);
    await expectTooMany(await post(session, "/sandbox/reset"), "sandbox resets", 2, "/sandbox");
    expect(await written(sandbox.id)).toEqual(before);
    const other = await createSandbox(area.db, await createOrganization(area.db, "Reset Other"));
    expect((await post(await signIn(area, await area.link(other.id)), "/sandbox/reset")).status).toBe(303);
  });

  it("refuse the switch past DEVELOPER_AREA_SANDBOX_SWITCHES with 429: no link, no session, and this session kept", async () => {
    const { org, session } = await liveOrganization("Switch Live");
    // Creating the sandbox counts as one of the live organization's resets.
    expect((await post(session, "/sandbox/create")).status).toBe(303);
    const [row] = await rows<{ id: string }>("select id from organizations where sandbox_of = ?", [org.id]);
    const sandboxId = Number(row!.id);
    /** Switches away from `from`: the other side's session. */
    const switchFrom = async (from: TestSession): Promise<TestSession> => {
      const switched = await post(from, "/sandbox/switch");
      expect(switched.status).toBe(303);
      const cookie = cookiePair(switched.headers.get("set-cookie")!);
      const page = await fetch(`${area.origin}/sandbox`, { headers: { cookie } });
      expect(page.status).toBe(200);
      return { cookie, formToken: formTokenIn(await page.text()) };
    };
    // Each side is counted as the organization it switches from: two each.
    const again = await switchFrom(await switchFrom(await switchFrom(await switchFrom(session))));
    const before = [await written(org.id), await written(sandboxId)];
    await expectTooMany(await post(again, "/sandbox/switch"), "sandbox switches", 2, "/sandbox");
    expect([await written(org.id), await written(sandboxId)]).toEqual(before);
    const kept = await fetch(`${area.origin}/sandbox`, { headers: { cookie: again.cookie } });
    expect(kept.status).toBe(200);
    // Another organization switches as before.
    const other = await liveOrganization("Switch Other");
    expect((await post(other.session, "/sandbox/create")).status).toBe(303);
    expect((await post(other.session, "/sandbox/switch")).status).toBe(303);
  });
});

describe("the API keys' changes", () => {
  it("refuse a create or roll past DEVELOPER_AREA_KEY_CHANGES with 429, writing nothing, and leave another organization its own", async () => {
    const { org, session } = await liveOrganization("Keys Live");
    // A refused form is not counted.
    expect((await post(session, "/api-keys", { name: "x", access: "everything", expires: "never" })).status).toBe(400);
    for (const name of ["one", "two"]) expect((await post(session, "/api-keys", { name, access: "read", expires: "never" })).status).toBe(201);
    expect((await post(session, `/api-keys/${org.readKeyId}/roll`, { overlap: "0" })).status).toBe(201);
    const before = await written(org.id);
    await expectTooMany(await post(session, "/api-keys", { name: "three", access: "read", expires: "never" }), "API key changes", 3, "/api-keys");
    await expectTooMany(await post(session, `/api-keys/${org.writeKeyId}/roll`, { overlap: "0" }), "API key changes", 3, "/api-keys");
    expect(await written(org.id)).toEqual(before);
    const other = await liveOrganization("Keys Other");
    expect((await post(other.session, "/api-keys", { name: "one", access: "read", expires: "never" })).status).toBe(201);
  });
});

describe("the cap on API keys (API_KEYS_PER_ORGANIZATION)", () => {
  it("refuses the key beyond it with 400, the reason beside the name, writing nothing; a revoked key frees its place", async () => {
    // The fixture's organization has two keys; the cap here is four.
    const { org, session } = await liveOrganization("Capped Keys");
    for (const name of ["three", "four"]) expect((await post(session, "/api-keys", { name, access: "read", expires: "never" })).status).toBe(201);
    const before = await written(org.id);
    const refused = await post(session, "/api-keys", { name: "five", access: "read_write", expires: "never" });
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toContain(
      '<p class="field-error" id="key-name-error">This organization already has 4 working API keys, the most it may have (revoked, expired and rolled ones do not count). Revoke one it no longer uses, or ask your Platter contact to raise the limit.</p>',
    );
    expect(page).toContain('value="five" aria-invalid="true"');
    expect(await written(org.id)).toEqual(before);
    // The refusal was not counted against the key changes either: one more create, once a key is revoked.
    expect((await post(session, `/api-keys/${org.readKeyId}/revoke`)).status).toBe(303);
    expect((await post(session, "/api-keys", { name: "five", access: "read", expires: "never" })).status).toBe(201);
  });
});

describe("a URL registered once per organization", () => {
  it("refuses the same URL again, however written, with 400 naming the endpoint that has it; another organization may register it", async () => {
    const { org, session } = await liveOrganization("Once Live");
    const added = await post(session, "/webhooks", { url: "https://203.0.113.40/hook", choice: "all" });
    expect(added.status).toBe(303);
    const id = /^\/webhooks\/(\d+)/.exec(added.headers.get("location")!)![1]!;
    const before = await written(org.id);
    const refused = await post(session, "/webhooks", { url: "HTTPS://203.0.113.40:443/hook#again", choice: "all" });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain(
      `<p class="field-error" id="endpoint-url-error">HTTPS://203.0.113.40:443/hook#again is already endpoint ${id}: one endpoint per URL (compared ignoring case and a trailing slash); use that one.</p>`,
    );
    expect(await written(org.id)).toEqual(before);
    const other = await liveOrganization("Once Other");
    expect((await post(other.session, "/webhooks", { url: "https://203.0.113.40/hook", choice: "all" })).status).toBe(303);
  });
});

describe("the endpoints' changes", () => {
  it("refuse an enable, disable or reveal past DEVELOPER_AREA_ENDPOINT_CHANGES with 429, changing nothing", async () => {
    const { org, session } = await liveOrganization("Endpoints Live");
    const added = await post(session, "/webhooks", { url: "https://203.0.113.30/hook", choice: "all" });
    expect(added.status).toBe(303);
    const id = /^\/webhooks\/(\d+)/.exec(added.headers.get("location")!)![1]!;
    expect((await post(session, `/webhooks/${id}/disable`)).status).toBe(303);
    expect((await post(session, `/webhooks/${id}/enable`)).status).toBe(303);
    expect((await post(session, `/webhooks/${id}/secret`)).status).toBe(200);
    const before = await written(org.id);
    for (const action of ["disable", "enable", "secret", "rotate"]) {
      await expectTooMany(await post(session, `/webhooks/${id}/${action}`), "endpoint changes", 3, `/webhooks/${id}`);
    }
    expect(await written(org.id)).toEqual(before);
    const other = await liveOrganization("Endpoints Other");
    const otherAdded = await post(other.session, "/webhooks", { url: "https://203.0.113.30/hook", choice: "all" });
    expect(otherAdded.status).toBe(303);
    expect((await post(other.session, `${otherAdded.headers.get("location")!.split("?")[0]!}/disable`)).status).toBe(303);
  });

  it("count a throttle as an endpoint change: a refused value is not counted, the one past the limit is 429 and changes nothing", async () => {
    const { org, session } = await liveOrganization("Throttle Live");
    const added = await post(session, "/webhooks", { url: "https://203.0.113.31/hook", choice: "all" });
    expect(added.status).toBe(303);
    const id = /^\/webhooks\/(\d+)/.exec(added.headers.get("location")!)![1]!;
    for (const per_second of ["0", "fast"]) expect((await post(session, `/webhooks/${id}/throttle`, { per_second })).status).toBe(400);
    for (const per_second of ["5", "none", "7"]) expect((await post(session, `/webhooks/${id}/throttle`, { per_second })).status).toBe(303);
    const before = await written(org.id);
    await expectTooMany(await post(session, `/webhooks/${id}/throttle`, { per_second: "9" }), "endpoint changes", 3, `/webhooks/${id}`);
    expect(await written(org.id)).toEqual(before);
    expect((await rows<{ throttle_per_second: number }>("select throttle_per_second from webhook_endpoints where id = ?", [id]))[0]!.throttle_per_second).toBe(7);
  });
});
