import { generateSigningSecret } from "@platter/domain";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Housekeeping, WebhookEndpointRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";

/**
 * Endpoint notices after the retention: settled old ones go, in batches; one still due for the
 * operator stays, and so does the one an endpoint's page still shows (the latest of its current stage).
 */

let db: TestDatabase;
let org: OrganizationFixture;
let endpointId: number;
const DAY = 24 * 3_600_000;

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
/** A notice of `kind`, created `daysAgo`, its operator delivery in `status`; returns its id. */
const notice = async (kind: string, daysAgo: number, status: string) =>
  Number((await rows<{ id: string }>(
    `insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, created_at, operator_status)
     values (?, ?, ?, 'test', 'https://198.51.100.8/hook', now() - ? * interval '1 day', ?) returning id`,
    [org.id, endpointId, kind, daysAgo, status],
  ))[0]!.id);

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db);
  endpointId = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.8/hook", [], generateSigningSecret())))).id;
});
afterAll(() => db?.dispose());

describe("pruneNotices", () => {
  it("removes settled notices older than the retention, in batches, and keeps a pending one and the one the endpoint's page shows", async () => {
    const oldSent = await notice("failing", 40, "succeeded");
    const oldFailed = await notice("disabling_soon", 40, "failed");
    const oldUnsent = await notice("failing", 39, "unsent");
    const oldPending = await notice("failing", 38, "pending");
    const shown = await notice("disabled", 35, "succeeded");
    const recent = await notice("failing", 1, "succeeded");
    await rows("update webhook_endpoints set notice_stage = 'disabled', enabled = false where id = ?", [endpointId]);
    const prune = (batch: number) => db.run(Housekeeping.use((h) => h.pruneNotices(30 * DAY, batch)));
    expect(await prune(2)).toBe(2);
    expect(await prune(2)).toBe(1);
    expect(await prune(2)).toBe(0);
    const left = (await rows<{ id: string }>("select id from endpoint_notices order by id")).map((row) => Number(row.id));
    expect(left).toEqual([oldPending, shown, recent]);
    expect(left).not.toContain(oldSent);
    expect(left).not.toContain(oldFailed);
    expect(left).not.toContain(oldUnsent);
    // The page still shows the disabled notice.
    expect((await db.run(WebhookEndpointRepository.use((r) => r.activeNotices(org.scope)))).map((n) => n.kind)).toEqual(["disabled"]);
  });
});
