import { type ChildProcess, fork, spawn } from "node:child_process";
import { originShare } from "@platter/domain";
import { freePort, TEST_SECRET_KEYS_TEXT } from "@platter/testing";
import { resolve } from "node:path";
import type { RawSenderSettings } from "./raw-sender.ts";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * The delivery workers under measurement, each a process of its own: the real dispatcher
 * (apps/dispatcher/src/main.ts, configured by environment as in production), the pg-boss
 * reference worker (pg-boss-worker.ts) and the raw sender (raw-sender.ts).
 */

const DISPATCHER_MAIN = resolve(import.meta.dirname, "../../../apps/dispatcher/src/main.ts");
const PG_BOSS_WORKER = resolve(import.meta.dirname, "pg-boss-worker.ts");
const RAW_SENDER = resolve(import.meta.dirname, "raw-sender.ts");
const API_MAIN = resolve(import.meta.dirname, "../../../apps/api/src/main.ts");

/** A started worker process. */
export interface WorkerProcess {
  readonly pid: number | undefined;
  /** `Date.now()` when it was spawned. */
  readonly spawnedAt: number;
  /** Resolves once it is ready to deliver; rejects if it exits first or takes over 60 s. */
  readonly ready: Promise<void>;
  /** SIGTERM, then SIGKILL after 20 s; resolves when it has exited. */
  readonly stop: () => Promise<void>;
  /** Its Prometheus metrics (dispatchers only). */
  readonly metricsUrl?: string;
}

const exited = (child: ChildProcess): Promise<void> =>
  new Promise((done) => (child.exitCode !== null || child.signalCode !== null ? done() : child.once("exit", () => done())));

const stopper = (child: ChildProcess) => async (): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const kill = setTimeout(() => child.kill("SIGKILL"), 20_000);
  child.kill("SIGTERM");
  await exited(child);
  clearTimeout(kill);
};

const failOnExit = (child: ChildProcess, name: string): Promise<never> =>
  new Promise((_, fail) => child.once("exit", (code, signal) => fail(new Error(`${name} exited early (${code ?? signal})`))));

const pollReady = async (url: string, deadline: number): Promise<void> => {
  while (Date.now() < deadline) {
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    await sleep(25);
  }
  throw new Error(`${url} did not answer within 60 s`);
};

/** How a benchmark's dispatcher process differs from its defaults. */
export interface DispatcherProcessOptions {
  /**
   * WEBHOOK_ENDPOINT_CONCURRENCY (and WEBHOOK_ORGANIZATION_CONCURRENCY): `"concurrency"` (unless told) sets them to the dispatcher's
   * concurrency, for the scenarios with one endpoint, whose attempts in flight are then
   * `concurrency`, as pg-boss's; `"production"` leaves the dispatcher's default (16).
   */
  readonly endpointCap?: "concurrency" | "production";
  /** More environment variables, applied last. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The fewest connections per origin of which one organization may hold `share` (`originShare`
 * keeps a quarter for the others there).
 */
const originConnectionsFor = (share: number): number => {
  let connections = share;
  while (originShare(connections) < share) connections++;
  return connections;
};

/**
 * The settings that give one endpoint of one organization all of a dispatcher's `concurrency`
 * slots: the endpoint's cap, the organization's, and enough connections to their origin that the
 * organization's share of them is as large (342 for 256).
 */
export const wholeDispatcher = (concurrency: number) => ({
  WEBHOOK_ENDPOINT_CONCURRENCY: String(concurrency),
  WEBHOOK_ORGANIZATION_CONCURRENCY: String(concurrency),
  WEBHOOK_ORIGIN_CONNECTIONS: String(originConnectionsFor(concurrency)),
});

/**
 * Spawns `apps/dispatcher/src/main.ts` against `databaseUrl`, allowed to deliver to 127.0.0.1,
 * with DISPATCHER_CONCURRENCY `concurrency` and the endpoint cap `options.endpointCap` says.
 */
export const startDispatcherProcess = async (
  databaseUrl: string,
  concurrency: number,
  options: DispatcherProcessOptions = {},
): Promise<WorkerProcess> => {
  const opsPort = await freePort();
  const spawnedAt = Date.now();
  const { WEBHOOK_ENDPOINT_CONCURRENCY: _inherited, WEBHOOK_ORGANIZATION_CONCURRENCY: _alsoInherited, ...inherited } = process.env;
  // One endpoint of one organization: its cap, the organization's and its share of the origin are the dispatcher's slots.
  const endpointCap = (options.endpointCap ?? "concurrency") === "concurrency" ? wholeDispatcher(concurrency) : {};
  // BENCH_DISPATCHER_CPU_PROF=<dir>: each dispatcher process writes a V8 CPU profile there when it exits (`node --cpu-prof`).
  const profileDir = process.env["BENCH_DISPATCHER_CPU_PROF"];
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...profile, "--conditions=@platter/source", DISPATCHER_MAIN], {
    env: {
      ...inherited,
      DATABASE_URL: databaseUrl,
      SECRET_ENCRYPTION_KEYS: TEST_SECRET_KEYS_TEXT,
      DISPATCHER_OPS_PORT: String(opsPort),
      HOST: "127.0.0.1",
      DISPATCHER_CONCURRENCY: String(concurrency),
      ...endpointCap,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      LOG_LEVEL: "warn",
      ...options.env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const ready = Promise.race([pollReady(`http://127.0.0.1:${opsPort}/readyz`, spawnedAt + 60_000), failOnExit(child, "dispatcher")]);
  ready.catch(() => {}); // the caller awaits it; an early exit after ready must not be unhandled
  return { pid: child.pid, spawnedAt, ready, stop: stopper(child), metricsUrl: `http://127.0.0.1:${opsPort}/metrics` };
};

/** How the pg-boss reference worker polls and how many POSTs it keeps in flight. */
export interface PgBossWorkerSettings {
  readonly queue: string;
  /** `boss.work` subscriptions in the process. */
  readonly workers: number;
  readonly batchSize: number;
  /** POSTs in flight per subscription, so workers × this is the process's concurrency. */
  readonly postsPerWorker: number;
  readonly pollingIntervalSeconds: number;
  readonly secret: string;
  readonly signatureHeader: string;
}

/** Forks the pg-boss reference worker; it reports `ready` over IPC once its subscriptions exist. */
export const startPgBossWorker = (databaseUrl: string, settings: PgBossWorkerSettings): WorkerProcess => {
  const spawnedAt = Date.now();
  const child = fork(PG_BOSS_WORKER, {
    execArgv: ["--conditions=@platter/source"],
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl, BENCH_PGBOSS_SETTINGS: JSON.stringify(settings) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = Promise.race([
    new Promise<void>((done) => child.once("message", () => done())),
    failOnExit(child, "pg-boss worker"),
  ]);
  ready.catch(() => {});
  return { pid: child.pid, spawnedAt, ready, stop: stopper(child) };
};

/** The started raw sender: `go` starts its sends and resolves with how many failed once all are answered. */
export interface RawSenderProcess extends WorkerProcess {
  readonly go: () => Promise<number>;
}

/** Forks the raw sender (raw-sender.ts); it is `ready` once its bodies exist, and sends on `go`. */
export const startRawSender = (settings: RawSenderSettings): RawSenderProcess => {
  const spawnedAt = Date.now();
  const child = fork(RAW_SENDER, {
    execArgv: ["--conditions=@platter/source"],
    env: { ...process.env, BENCH_RAW_SENDER_SETTINGS: JSON.stringify(settings) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = Promise.race([new Promise<void>((done) => child.once("message", () => done())), failOnExit(child, "raw sender")]);
  ready.catch(() => {});
  const go = () => {
    const done = new Promise<number>((finished) => child.once("message", (m: { failed: number }) => finished(m.failed)));
    child.send("go");
    return Promise.race([done, failOnExit(child, "raw sender")]);
  };
  return { pid: child.pid, spawnedAt, ready, stop: stopper(child), go };
};

/** A started API process: its public URL besides the rest. */
export interface ApiProcess extends WorkerProcess {
  readonly url: string;
}

/**
 * Spawns `apps/api/src/main.ts` (production code and config) against `databaseUrl` on free ports of
 * 127.0.0.1, with `env` applied last (the benchmark's rate limits, say); ready once its ops port's
 * /readyz answers.
 */
export const startApiProcess = async (databaseUrl: string, env: Readonly<Record<string, string>> = {}): Promise<ApiProcess> => {
  const [port, opsPort] = [await freePort(), await freePort()];
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, ["--conditions=@platter/source", API_MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      SECRET_ENCRYPTION_KEYS: TEST_SECRET_KEYS_TEXT,
      PORT: String(port),
      OPS_PORT: String(opsPort),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const ready = Promise.race([pollReady(`http://127.0.0.1:${opsPort}/readyz`, spawnedAt + 60_000), failOnExit(child, "API")]);
  ready.catch(() => {});
  return { pid: child.pid, spawnedAt, ready, stop: stopper(child), url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${opsPort}/metrics` };
};
