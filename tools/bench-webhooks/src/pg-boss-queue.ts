import { randomUUID } from "node:crypto";
import { envelopeBody } from "@platter/domain";
import PgBoss from "pg-boss";
import type { SingleEvents } from "./measurements.ts";
import type { WebhookJob } from "./pg-boss-worker.ts";

/**
 * The reference's side of the data: a pg-boss 11 queue whose jobs carry the same envelope bytes the
 * dispatcher would send (same shape, same payload), enqueued with `boss.insert` / `boss.send`.
 */

/** The reference's queue. */
export const QUEUE = "webhook-deliveries";

const INSERT_BATCH = 5_000;

/** A pg-boss instance for enqueueing only (no maintenance, no cron), with the queue created (with `queueOptions`, if any). */
export const openPgBoss = async (databaseUrl: string, queueOptions: Omit<PgBoss.Queue, "name"> = {}): Promise<PgBoss> => {
  const boss = new PgBoss({ connectionString: databaseUrl, max: 4, supervise: false, schedule: false });
  boss.on("error", (error) => console.error("pg-boss:", error.message));
  await boss.start();
  await boss.createQueue(QUEUE, queueOptions);
  return boss;
};

/** Job `n`: a fresh envelope id and the same created client as the Platter backlog's, as the bytes the dispatcher sends. */
export const jobOf = (url: string, n: number): WebhookJob => {
  const envelopeId = `evt_${randomUUID().replaceAll("-", "")}`;
  const body = envelopeBody({
    envelopeId,
    type: "client.created",
    createdAt: new Date().toISOString(),
    // The same created client as the Platter backlog's (platter-outbox.ts), so both send the same bytes per delivery.
    payload: { version: 1, data: { id: n, name: `Client ${n}`, email: null, phone: null, company: null, created_at: "2026-11-23T08:00:00.000Z" } },
  })!;
  return { url, envelopeId, body };
};

/** Enqueues `count` jobs with `boss.insert`, in batches. */
export const enqueueJobs = async (boss: PgBoss, url: string, count: number): Promise<void> => {
  for (let from = 1; from <= count; from += INSERT_BATCH) {
    const jobs: PgBoss.JobInsert<WebhookJob>[] = [];
    for (let n = from; n < from + INSERT_BATCH && n <= count; n += 1) jobs.push({ name: QUEUE, data: jobOf(url, n) });
    await boss.insert(QUEUE, jobs);
  }
  await boss.getDb().executeSql("analyze pgboss.job", []);
};

/** Single jobs with `boss.send`; commit times come from the jobs' `created_on`. */
export const pgBossSingleJobs = (boss: PgBoss, url: string): SingleEvents => {
  const jobIds = new Map<string, string>();
  return {
    commitOne: async (n) => {
      const job = jobOf(url, n);
      const id = await boss.send(QUEUE, job);
      if (id === null) throw new Error("pg-boss did not create the job");
      jobIds.set(job.envelopeId, id);
      return job.envelopeId;
    },
    commitTimes: async (envelopeIds) => {
      const { rows } = await boss.getDb().executeSql(
        "select id, extract(epoch from created_on)::float8 * 1000 as ms from pgboss.job where name = $1 and id = any($2::uuid[])",
        [QUEUE, envelopeIds.map((e) => jobIds.get(e))],
      );
      const byJob = new Map((rows as { id: string; ms: number }[]).map((r) => [r.id, Number(r.ms)]));
      return new Map(envelopeIds.flatMap((e) => {
        const ms = byJob.get(jobIds.get(e)!);
        return ms === undefined ? [] : [[e, ms] as const];
      }));
    },
  };
};
