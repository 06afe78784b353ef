import { signedHeaders } from "@platter/webhooks";
import { Agent, request } from "undici";
import { jobOf } from "./pg-boss-queue.ts";

/**
 * The floor: what sending alone costs, with no queue at all. The backlog's bodies (the same bytes
 * as pg-boss's jobs and the dispatcher's envelopes) are made before the measurement; on `go` a
 * minimal loop signs each exactly as Platter does (`signedHeaders`: Standard Webhooks'
 * `webhook-signature` and `x-platter-signature`, one HMAC each per attempt) and POSTs it with undici
 * over a keep-alive pool of a connection per POST in flight, `concurrency` at a time, reading each
 * answer. Started by main.ts with `fork`; says `ready` once the bodies exist and `done` once all
 * are answered.
 */

/** What the raw sender is told. */
export interface RawSenderSettings {
  readonly url: string;
  readonly secret: string;
  readonly signatureHeader: string;
  readonly deliveries: number;
  readonly concurrency: number;
}

const rawSettings = process.env["BENCH_RAW_SENDER_SETTINGS"];
if (rawSettings === undefined || process.send === undefined) throw new Error("raw-sender.ts is started by the benchmark (main.ts)");
const settings = JSON.parse(rawSettings) as RawSenderSettings;
const send = process.send.bind(process);

const TIMEOUT_MS = 15_000;
const agent = new Agent({ keepAliveTimeout: 30_000, connections: settings.concurrency });
const jobs = Array.from({ length: settings.deliveries }, (_, i) => jobOf(settings.url, i + 1));

const post = async (envelopeId: string, body: string): Promise<number> => {
  const response = await request(settings.url, {
    method: "POST",
    dispatcher: agent,
    headers: {
      ...signedHeaders({ envelopeId, secret: settings.secret, previousSecret: undefined, body }, Math.floor(Date.now() / 1000), settings.signatureHeader),
      "user-agent": "Platter-Webhooks/1.0",
    },
    body,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  await response.body.text();
  return response.statusCode;
};

const sendAll = async (): Promise<number> => {
  let next = 0;
  let failed = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      const status = await post(job.envelopeId, job.body).catch(() => 0);
      if (status < 200 || status >= 300) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(settings.concurrency, jobs.length) }, lane));
  return failed;
};

process.once("message", () => {
  void sendAll().then((failed) => send({ done: true, failed }));
});
process.on("disconnect", () => void agent.close().finally(() => process.exit(0)));
send({ ready: true });
