import { generateSigningSecret } from "@platter/domain";
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, freePort, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/**
 * Two API processes and two dispatchers on one database, as docs/operations.md runs them. While
 * creates flow through both APIs (a client that, like a load balancer, sends the next try to the
 * other instance when one refuses the connection or answers 503), each process is restarted in
 * turn with SIGTERM. No request is lost (every create lands exactly once: Idempotency-Key makes the
 * retries safe) and no delivery is lost (every message reaches the receiver).
 */

const API_MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const DISPATCHER_MAIN = fileURLToPath(new URL("../../dispatcher/src/main.ts", import.meta.url));
const CREATES = 300;

interface Running {
  child: ChildProcess;
  exited: Promise<number | null>;
}

let db: TestDatabase;
let receiver: Server;
const envelopes = new Set<string>();
const children = new Set<ChildProcess>();

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      envelopes.add(JSON.parse(Buffer.concat(chunks).toString("utf8")).id);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  receiver?.closeAllConnections();
  await new Promise((done) => receiver?.close(done));
  await db?.dispose();
});

const launch = (main: string, env: Record<string, string>): Running => {
  const child = spawn(process.execPath, ["--conditions=@platter/source", main], {
    env: { ...process.env, DATABASE_URL: db.url, HOST: "127.0.0.1", LOG_LEVEL: "warn", ...env },
    stdio: "ignore",
  });
  children.add(child);
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => (children.delete(child), done(code))));
  return { child, exited };
};

const ready = async (opsPort: number) => {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if ((await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined))?.status === 200) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`nothing ready on ${opsPort}`);
};

/** A process on fixed ports, restartable in place. */
const service = async (main: string, ports: Record<string, number>, env: Record<string, string> = {}) => {
  const opsPort = ports["OPS_PORT"] ?? ports["DISPATCHER_OPS_PORT"]!;
  const portEnv = Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)]));
  let current = launch(main, { ...portEnv, ...env });
  await ready(opsPort);
  return {
    restart: async () => {
      current.child.kill("SIGTERM");
      expect(await current.exited).toBe(0);
      current = launch(main, { ...portEnv, ...env });
      await ready(opsPort);
    },
    stop: async () => {
      current.child.kill("SIGTERM");
      expect(await current.exited).toBe(0);
    },
  };
};

describe("two APIs and two dispatchers restarted in turn under load", () => {
  it(`lose no request and no delivery (${CREATES} creates)`, async () => {
    const org = await createOrganization(db, "Rolling Caterers");
    await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, [], generateSigningSecret())));
    const apiPorts = [await freePort(), await freePort()];
    const apis = await Promise.all(apiPorts.map(async (port) => service(API_MAIN, { PORT: port, OPS_PORT: await freePort() }, {
      SHUTDOWN_GRACE_MS: "5000", RATE_LIMIT: "10000", RATE_LIMIT_BURST: "20000", RATE_LIMIT_CREATES: "10000", RATE_LIMIT_CREATES_BURST: "20000",
    })));
    const dispatcherEnv = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_TIMEOUT: "5s", WEBHOOK_LEASE: "10s", WEBHOOK_RETRY_SCHEDULE: "0s,200ms,500ms,1s,2s" };
    const dispatchers = await Promise.all([0, 1].map(async () => service(DISPATCHER_MAIN, { DISPATCHER_OPS_PORT: await freePort() }, dispatcherEnv)));

    /** One create, tried on each instance in turn until one answers it (at most 200 tries). */
    let retries = 0;
    const create = async (n: number): Promise<number> => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const port = apiPorts[(n + attempt) % 2]!;
        const response = await fetch(`http://127.0.0.1:${port}/v1/clients`, {
          method: "POST",
          headers: { authorization: `Bearer ${org.writeKey}`, "content-type": "application/json", "idempotency-key": `rolling-${n}` },
          body: JSON.stringify({ name: `Client ${n}` }),
        }).catch(() => undefined);
        if (response?.status === 201) return ((await response.json()) as { id: number }).id;
        if (response !== undefined && response.status !== 503) throw new Error(`create ${n} answered ${response.status}: ${await response.text()}`);
        retries++;
        await new Promise((done) => setTimeout(done, 25));
      }
      throw new Error(`create ${n} was never answered`);
    };

    const load = (async () => {
      const ids: number[] = [];
      for (let n = 0; n < CREATES; n += 3) ids.push(...(await Promise.all([n, n + 1, n + 2].filter((i) => i < CREATES).map(create))));
      return ids;
    })();
    for (const process of [...apis, ...dispatchers]) {
      await new Promise((done) => setTimeout(done, 300));
      await process.restart();
    }
    const ids = await load;

    expect(new Set(ids).size).toBe(CREATES);
    const [stored] = await db.orm.em.getConnection().execute<{ n: number }[]>("select count(*)::int as n from clients where organization_id = ?", [org.id]);
    expect(stored!.n).toBe(CREATES);
    const deadline = Date.now() + 30_000;
    while (envelopes.size < CREATES && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
    expect(envelopes.size).toBe(CREATES);
    const [pending] = await db.orm.em.getConnection().execute<{ n: number }[]>(
      "select count(*)::int as n from webhook_deliveries where organization_id = ? and status <> 'succeeded'", [org.id],
    );
    expect(pending!.n).toBe(0);
    console.info(`rolling restart: ${CREATES} creates, ${retries} tries sent to the other instance, ${envelopes.size} envelopes received`);
    await Promise.all([...apis, ...dispatchers].map((process) => process.stop()));
  }, 120_000);
});
