import { HistoryPartitions, REQUEST_HISTORY } from "@platter/persistence";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REQUEST_HISTORY_DEFAULTS } from "../src/request-log.ts";
import { type ApiUnderTest, startAnotherInstance, startApiUnderTest } from "./api-harness.ts";

/**
 * The request log is partitioned by time (`REQUEST_HISTORY`) and only the API makes its partitions:
 * an API instance starting makes them ahead (`REQUEST_HISTORY_PARTITION` each, 8 of them or 2 hours
 * ahead), whatever was there before, so the log's writes find one.
 */

let api: ApiUnderTest;
beforeAll(async () => {
  api = await startApiUnderTest();
});
afterAll(() => api?.close());

describe("the request log's partitions", () => {
  it("are made ahead by an API instance at its start, none there before", async () => {
    for (const { name } of await api.sql<{ name: string }>(
      "select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'api_requests'::regclass")) {
      await api.sql(`alter table api_requests detach partition ${name}`);
      await api.sql(`drop table ${name}`);
    }
    expect(await api.db.run(HistoryPartitions.use((h) => h.list(REQUEST_HISTORY)))).toEqual([]);

    const instance = await startAnotherInstance(api.db);
    try {
      const partitions = await api.db.run(HistoryPartitions.use((h) => h.list(REQUEST_HISTORY)));
      const [row] = await api.sql<{ now: Date }>("select now() as now");
      const now = new Date(row!.now).getTime();
      expect(partitions[0]!.from.getTime()).toBeLessThanOrEqual(now);
      expect(partitions.at(-1)!.to.getTime()).toBeGreaterThanOrEqual(now + REQUEST_HISTORY_DEFAULTS.aheadMs - 60_000);
      expect(partitions.every((p) => p.to.getTime() - p.from.getTime() === REQUEST_HISTORY_DEFAULTS.partitionMs)).toBe(true);
    } finally {
      await instance.stop();
    }
  });
});
