import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";

/**
 * Webhook history is partitioned by time with no DEFAULT partition: a create whose message no
 * partition takes (none made ahead for now) is answered 503 like an outage, never a 500, and
 * writes nothing.
 */

let api: ApiUnderTest;
let org: OrganizationFixture;
beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Unpartitioned Catering");
});
afterAll(() => api?.close());

describe("a create with no history partition for now", () => {
  it("is answered 503 and writes nothing", async () => {
    // The partitions holding now, in each of the three tables, gone (as if nothing had made them ahead).
    const current = await api.sql<{ parent: string; name: string }>(
      `select i.inhparent::regclass::text as parent, c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent in ('webhook_messages'::regclass, 'webhook_deliveries'::regclass, 'webhook_attempts'::regclass)
         and now() >= (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz
         and now() < (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz`,
    );
    expect(current.map((p) => p.parent).sort()).toEqual(["webhook_attempts", "webhook_deliveries", "webhook_messages"]);
    for (const { parent, name } of current) {
      await api.sql(`alter table ${parent} detach partition ${name}`);
      await api.sql(`drop table ${name}`);
    }

    const response = await api.call("POST", "/v1/clients", { key: org.writeKey, body: { name: "Nowhere to go" } });

    expect(response.status).toBe(503);
    const [clients] = await api.sql<{ n: number }>("select count(*)::int as n from clients where organization_id = ?", [org.id]);
    expect(clients).toEqual({ n: 0 });
  });
});
