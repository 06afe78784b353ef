import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { endpointsWithNotices } from "./endpoint-notice-fixtures.ts";
import { type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * The Webhooks pages over HTTP show each endpoint's active operational notice as a banner (failing,
 * about to be disabled at a time, disabled because of a reason), text escaped; another
 * organization's pages show none of them; enabling an endpoint again clears its banner.
 */

let area: RunningArea;
let org: OrganizationFixture;
let session: TestSession;
let otherSession: TestSession;
let ids: Awaited<ReturnType<typeof endpointsWithNotices>>;

beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  org = await createOrganization(area.db, "Notice Kitchen");
  const other = await createOrganization(area.db, "Other Kitchen");
  ids = await endpointsWithNotices(area.db, org);
  session = await signIn(area, await area.link(org.id));
  otherSession = await signIn(area, await area.link(other.id));
});
afterAll(() => area?.stop());

const getPage = async (path: string, as: TestSession = session) => {
  const response = await fetch(area.origin + path, { headers: { cookie: as.cookie }, redirect: "manual" });
  expect(response.status).toBe(200);
  return response.text();
};

const banners = (page: string) => [...page.matchAll(/data-notice="([a-z_]+)"/g)].map((m) => m[1]);

describe("operational notices in the Developer area", () => {
  it("shows a banner per endpoint with an active notice on the Webhooks list, its text escaped", async () => {
    const page = await getPage("/webhooks");
    expect(banners(page)).toEqual(["failing", "disabling_soon", "disabled"]);
    expect(page).toContain("1 failed attempt in a row, so its circuit is open");
    expect(page).toMatch(/About to be disabled at <time[^>]*>/);
    expect(page).toContain("because endpoint answered 410 Gone");
    expect(page).not.toContain("<img src=x");
    expect(page).toContain("hook?x=&lt;img src=x onerror=alert(1)&gt;");
  });

  it("shows the endpoint's own banner on its page, and none on a healthy endpoint's", async () => {
    expect(banners(await getPage(`/webhooks/${ids.failing}`))).toEqual(["failing"]);
    expect(banners(await getPage(`/webhooks/${ids.soon}`))).toEqual(["disabling_soon"]);
    const gone = await getPage(`/webhooks/${ids.gone}`);
    expect(banners(gone)).toEqual(["disabled"]);
    expect(gone).toContain("because endpoint answered 410 Gone");
    expect(banners(await getPage(`/webhooks/${ids.healthy}`))).toEqual([]);
  });

  it("shows another organization none of them", async () => {
    expect(banners(await getPage("/webhooks", otherSession))).toEqual([]);
  });

  it("clears the banner once the endpoint is enabled again", async () => {
    const page = await getPage(`/webhooks/${ids.gone}`);
    const token = /name="form_token" value="([^"]+)"/.exec(page)![1]!;
    const enabled = await fetch(`${area.origin}/webhooks/${ids.gone}/enable`, {
      method: "POST", redirect: "manual",
      headers: { cookie: session.cookie, origin: area.origin, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ form_token: token }),
    });
    expect(enabled.status).toBe(303);
    expect(banners(await getPage("/webhooks"))).toEqual(["failing", "disabling_soon"]);
  });
});
