import { createOrganization, type OrganizationFixture, startTestReplication, type TestReplication } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * The Developer area's pages read from a real streaming replica; a browser that just sent a form
 * reads from the primary for the read-your-writes window, so the page after a change shows it even
 * while the replica's replay is paused.
 */

const MAX_LAG_MS = 1_000;
const READ_YOUR_WRITES_MS = 3_000;

let replication: TestReplication;
let area: RunningArea;
let org: OrganizationFixture;
let session: TestSession;

beforeAll(async () => {
  replication = await startTestReplication();
  area = await startArea(replication.primaryAdminUrl, "'self'", {
    allowPrivateNetworks: false,
    replicas: { replicaUrlOf: replication.replicaUrlOf, maxLagMs: MAX_LAG_MS, timeoutMs: 500, readYourWritesMs: READ_YOUR_WRITES_MS },
  });
  org = await createOrganization(area.db, "Replicated Catering");
  await replication.caughtUp();
  session = await signIn(area, await area.link(org.id));
}, 120_000);

afterAll(async () => {
  await area?.stop();
  await replication?.dispose();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const getPage = (path: string, cookie = session.cookie) => fetch(area.origin + path, { headers: { cookie }, redirect: "manual" });

/** Scans of `table` in the test database, as the replica's own statistics count them. */
const replicaScans = async (table: string): Promise<number> => {
  const [row] = await replication.onReplica<{ scans: string }>(
    "select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans from pg_stat_user_tables where relname = $1",
    [table],
    new URL(area.db.url).pathname.slice(1),
  );
  return Number(row?.scans ?? 0);
};

describe("Developer-area pages on a streaming replica", () => {
  it("reads a page's organization data from the replica", async () => {
    const before = await replicaScans("api_keys");
    for (let i = 0; i < 5; i++) expect((await getPage("/api-keys")).status).toBe(200);
    await expect.poll(async () => (await replicaScans("api_keys")) - before, { timeout: 15_000 }).toBeGreaterThanOrEqual(5);
  });

  it("shows the page after a form its change at once, the replay paused; other browsers once the replica is past the bound", async () => {
    await replication.pauseReplay();
    try {
      const added = await postForm(
        area, "/webhooks", { form_token: session.formToken, url: "https://198.51.100.30/replicated", choice: "all" }, { cookie: session.cookie },
      );
      expect(added.status).toBe(303);
      const location = added.headers.get("location")!;
      expect(location).toMatch(/^\/webhooks\/\d+\?done=added$/);
      const mark = added.headers.getSetCookie().find((cookie) => cookie.startsWith("platter_wrote="));
      expect(mark).toContain(`Max-Age=${READ_YOUR_WRITES_MS / 1000}`);
      // This browser: the page right after the change, from the primary.
      const shown = await getPage(location, `${session.cookie}; ${mark!.split(";")[0]}`);
      expect(shown.status).toBe(200);
      expect(await shown.text()).toContain("https://198.51.100.30/replicated");
      // Another tab without the mark: past the bound, the paused replica is left out and the primary answers.
      await sleep(MAX_LAG_MS * 2);
      const later = await getPage(location);
      expect(later.status).toBe(200);
      expect(await later.text()).toContain("https://198.51.100.30/replicated");
    } finally {
      await replication.resumeReplay();
    }
  });
});
