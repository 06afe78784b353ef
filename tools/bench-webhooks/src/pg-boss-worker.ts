import { signPayload } from "@platter/domain";
import PgBoss from "pg-boss";
import { Agent, request } from "undici";
import type { PgBossWorkerSettings } from "./worker-processes.ts";

/**
 * The reference: a webhook worker as one would write it on pg-boss 11. Each job carries the exact
 * body; the worker signs it (HMAC-SHA256, same header) and POSTs it over a keep-alive undici pool
 * with a connection per POST in flight, as the dispatcher, with the same headers. A non-2xx answer
 * fails the job so pg-boss retries it. Started by main.ts with `fork`; says `ready` over IPC, stops
 * on SIGTERM.
 */

/** What a reference job carries. */
export interface WebhookJob {
  readonly url: string;
  readonly envelopeId: string;
  readonly body: string;
}

const databaseUrl = process.env["BENCH_DATABASE_URL"];
const rawSettings = process.env["BENCH_PGBOSS_SETTINGS"];
if (!databaseUrl || !rawSettings || process.send === undefined) throw new Error("pg-boss-worker.ts is started by the benchmark (main.ts)");
const settings = JSON.parse(rawSettings) as PgBossWorkerSettings;

const TIMEOUT_MS = 15_000;
// A connection per POST in flight, as the dispatcher's attempts to the one endpoint.
const agent = new Agent({ keepAliveTimeout: 30_000, connections: settings.workers * settings.postsPerWorker });

const post = async (job: WebhookJob): Promise<number> => {
  const response = await request(job.url, {
    method: "POST",
    dispatcher: agent,
    headers: {
      "content-type": "application/json",
      "user-agent": "Platter-Webhooks/1.0",
      "webhook-id": job.envelopeId,
      [settings.signatureHeader]: signPayload(settings.secret, job.body),
    },
    body: job.body,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  await response.body.text();
  return response.statusCode;
};

/** Delivers a fetched batch with `postsPerWorker` POSTs in flight; throws if any was not a 2xx. */
const deliverBatch = async (jobs: PgBoss.Job<WebhookJob>[]): Promise<void> => {
  let next = 0;
  let failed = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      const status = await post(job.data).catch(() => 0);
      if (status < 200 || status >= 300) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(settings.postsPerWorker, jobs.length) }, lane));
  if (failed > 0) throw new Error(`${failed} of ${jobs.length} deliveries failed`);
};

const boss = new PgBoss({ connectionString: databaseUrl, max: 10 });
boss.on("error", (error) => console.error("pg-boss worker:", error.message));
await boss.start();
for (let i = 0; i < settings.workers; i += 1) {
  await boss.work<WebhookJob>(
    settings.queue,
    { batchSize: settings.batchSize, pollingIntervalSeconds: settings.pollingIntervalSeconds },
    deliverBatch,
  );
}
process.send("ready");

let stopping = false;
process.on("SIGTERM", () => {
  if (stopping) return;
  stopping = true;
  void boss
    .stop({ graceful: true, wait: true, timeout: 15_000 })
    .then(() => agent.close())
    .finally(() => process.exit(0));
});
process.on("disconnect", () => process.kill(process.pid, "SIGTERM"));
