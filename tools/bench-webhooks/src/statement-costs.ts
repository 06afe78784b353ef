import type { AttemptRecord, HeldSlots } from "@platter/domain";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import { testDeliveryPolicy } from "@platter/testing";
import { CostMeter } from "./database-cost.ts";
import { enqueueBacklog, withPlatterDatabase } from "./platter-outbox.ts";
import { processCpuSeconds } from "./process-cpu.ts";

/**
 * The `statements` scenario: what the dispatcher's two statements cost PostgreSQL per delivery, the
 * claim and the recording of results, each measured on its own. A backlog is drained through
 * `DeliveryQueue` itself (no dispatcher process, no HTTP: every attempt "succeeded"), one statement at a
 * time, and around each statement the CPU of the database's backends (/proc) and the WAL position are
 * read; so a claim's fixed cost (the fair walk, a generic plan over the partitions) shows apart from
 * its cost per row, at each claim size asked for. The endpoint's cap is the claim size, as in the
 * backlog drain (one endpoint of one organization, its cap the dispatcher's slots).
 */

/** One claim size's figures, per delivery. */
export interface StatementCost {
  readonly claimSize: number;
  readonly recordBatch: number;
  readonly deliveries: number;
  readonly claims: number;
  readonly records: number;
  /** PostgreSQL CPU µs per delivery in the claim statement, and in the recording statement. */
  readonly claimCpuUs: number;
  readonly recordCpuUs: number;
  /** WAL bytes per delivery written by the claims, and by the recordings. */
  readonly claimWalBytes: number;
  readonly recordWalBytes: number;
}

/** The slots of a dispatcher that claims `size` at a time at one endpoint whose cap is its slots, holding nothing. */
const slotsOf = (size: number): HeldSlots => ({
  share: size, inFlight: new Map(), organizationShare: size, inFlightByOrganization: new Map(),
  originConnections: size, inFlightByOrigin: new Map(), originShare: size,
});

/** Drains `events` deliveries, claiming `claimSize` at a time and recording `recordBatch` results at a time. */
export const measureStatementCosts = (
  adminUrl: string, events: number, claimSize: number, recordBatch: number,
): Promise<StatementCost> =>
  withPlatterDatabase(adminUrl, "http://127.0.0.1:9/unsent", async (db, organizationId) => {
    await enqueueBacklog(db, organizationId, events);
    const meter = await CostMeter.open(db.url);
    try {
      const held = slotsOf(claimSize);
      const policy = testDeliveryPolicy;
      // Every backend of the database but the meter's own: the pool's connections.
      const ownPid = await meter.count("select pg_backend_pid() as n");
      const backendCpu = async () => {
        let seconds = 0;
        for (const pid of await meter.backends()) if (pid !== ownPid) seconds += processCpuSeconds(pid) ?? 0;
        return seconds;
      };
      // One statement first, so the pool's connections exist and have prepared it (start-up stays out of the figures).
      const first = await db.run(DeliveryQueue.use((queue) => queue.claimDue(1, 60_000, policy, held)));
      const pending: AttemptRecord[] = first.due.map((delivery) => succeeded(delivery));
      let claimSeconds = 0, recordSeconds = 0, claimWal = 0, recordWal = 0, claims = 0, records = 0, deliveries = 0;
      const measured = async (run: () => Promise<unknown>): Promise<{ seconds: number; wal: number }> => {
        const cpuBefore = await backendCpu();
        const before = await meter.snapshot();
        await run();
        const after = await meter.snapshot();
        const cpuAfter = await backendCpu();
        return { seconds: cpuAfter - cpuBefore, wal: (await meter.between(before, after)).walBytes };
      };
      const record = async () => {
        const batch = pending.splice(0, pending.length);
        const cost = await measured(() => db.run(DeliveryQueue.use((queue) => queue.recordAttempts(batch, policy))));
        recordSeconds += cost.seconds;
        recordWal += cost.wal;
        records++;
        deliveries += batch.length;
      };
      for (;;) {
        let claimed: ReadonlyArray<AttemptRecord["delivery"]> = [];
        const cost = await measured(async () => {
          claimed = (await db.run(DeliveryQueue.use((queue) => queue.claimDue(claimSize, 60_000, policy, held)))).due;
        });
        if (claimed.length === 0) break;
        claimSeconds += cost.seconds;
        claimWal += cost.wal;
        claims++;
        pending.push(...claimed.map((delivery) => succeeded(delivery)));
        if (pending.length >= recordBatch) await record();
      }
      if (pending.length > 0) await record();
      const perDelivery = (total: number) => Math.round(total / Math.max(1, deliveries));
      return {
        claimSize, recordBatch, deliveries, claims, records,
        claimCpuUs: perDelivery(claimSeconds * 1e6), recordCpuUs: perDelivery(recordSeconds * 1e6),
        claimWalBytes: perDelivery(claimWal), recordWalBytes: perDelivery(recordWal),
      };
    } finally {
      await meter.close();
    }
  });

/** A successful attempt of `delivery` (a 200 in 1 ms, nothing in the body). */
const succeeded = (delivery: AttemptRecord["delivery"]): AttemptRecord => ({
  delivery, startedAt: new Date(), durationMs: 1, statusCode: 200, error: undefined, responseBody: undefined, outcome: "succeeded",
});

/** The scenario's table for the console. */
export const statementCostsConsole = (costs: ReadonlyArray<StatementCost>): string => {
  const header = ["claim size", "record batch", "deliveries", "claims", "claim CPU µs", "record CPU µs", "claim WAL B", "record WAL B"];
  const rows = costs.map((c) => [c.claimSize, c.recordBatch, c.deliveries, c.claims, c.claimCpuUs, c.recordCpuUs, c.claimWalBytes, c.recordWalBytes]
    .map((value) => value.toLocaleString("en-US")));
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, i) => cell.padStart(widths[i]!)).join("  ");
  return ["PostgreSQL per delivery, each statement on its own (CPU of the backends, WAL; every attempt succeeded):",
    line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
};
