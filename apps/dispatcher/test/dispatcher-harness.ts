import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { DeliveryRepository, WebhookEndpointRepository } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { createOrganization, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * Test harness for the dispatcher: real dispatcher processes, real HTTP receivers on 127.0.0.1,
 * and an HMAC computed by Python, independently of our signing code.
 */

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));

/** Polls `check` until it returns something other than `undefined`/`false`, or fails after `timeoutMs`. */
export const waitFor = async <T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
};

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A port nothing listens on right now: bound once, then released. */
export const freePort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
};

// ─── Receivers ────────────────────────────────────────────────────────────────

/** One request as the receiver got it, with the exact body bytes. */
export interface ReceivedRequest {
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
  /** The parsed envelope. */
  readonly envelope: any;
  /** `Date.now()` when the whole request had arrived. */
  readonly receivedAt: number;
}

/** How to answer a request: a status, after an optional delay, with an optional body. */
export interface Answer {
  readonly status: number;
  readonly delayMs?: number;
  readonly body?: string;
}

export interface Receiver {
  readonly port: number;
  readonly url: string;
  /** Every request, in arrival order. */
  readonly received: ReceivedRequest[];
  /** Requests for an envelope that arrived while another request for the same envelope was unanswered. */
  readonly concurrentRepeats: string[];
  /** Requests received but not answered yet. */
  readonly inFlight: () => number;
  /** The most requests ever unanswered at once. */
  readonly peakInFlight: () => number;
  /** Requests received per envelope id. */
  readonly countsByEnvelope: () => Map<string, number>;
  readonly close: () => Promise<void>;
}

/**
 * An HTTP receiver on 127.0.0.1 (on `port` when given). `answer` decides each response from the
 * request and how many requests for the same envelope came before it (0 for the first).
 */
export const startReceiver = async (
  answer: (request: ReceivedRequest, previousForEnvelope: number) => Answer = () => ({ status: 200 }),
  port = 0,
): Promise<Receiver> => {
  const received: ReceivedRequest[] = [];
  const concurrentRepeats: string[] = [];
  const unanswered = new Map<string, number>();
  const seen = new Map<string, number>();
  const pending = new Set<NodeJS.Timeout>();
  let open = 0;
  let peak = 0;
  const server: Server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks);
      let envelope: any;
      try {
        envelope = JSON.parse(rawBody.toString("utf8"));
      } catch {
        envelope = undefined;
      }
      const request: ReceivedRequest = { headers: req.headers, rawBody, envelope, receivedAt: Date.now() };
      const id = String(envelope?.id);
      const previous = seen.get(id) ?? 0;
      seen.set(id, previous + 1);
      if ((unanswered.get(id) ?? 0) > 0) concurrentRepeats.push(id);
      unanswered.set(id, (unanswered.get(id) ?? 0) + 1);
      peak = Math.max(peak, ++open);
      received.push(request);
      const { status, delayMs = 0, body = "" } = answer(request, previous);
      let answered = false;
      const settle = () => {
        if (answered) return;
        answered = true;
        open--;
        unanswered.set(id, unanswered.get(id)! - 1);
      };
      res.on("close", settle);
      const reply = () => {
        pending.delete(timer);
        settle();
        if (!res.destroyed) res.writeHead(status, { "content-type": "text/plain" }).end(body);
      };
      const timer = setTimeout(reply, delayMs);
      pending.add(timer);
    });
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", done);
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    url: `http://127.0.0.1:${bound}/webhooks`,
    received,
    concurrentRepeats,
    inFlight: () => open,
    peakInFlight: () => peak,
    countsByEnvelope: () => new Map(seen),
    close: () =>
      new Promise((done) => {
        for (const timer of pending) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
};

/** HMAC-SHA256 of the exact bytes, computed by Python's hmac module. */
export const pythonHmacHex = (secret: string, rawBody: Buffer): Promise<string> =>
  new Promise((done, fail) => {
    const script = "import hmac, hashlib, sys; print(hmac.new(sys.argv[1].encode(), sys.stdin.buffer.read(), hashlib.sha256).hexdigest())";
    const child = spawn("python3", ["-c", script, secret], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done(out.trim()) : fail(new Error(`python3 exited ${code}`))));
    child.stdin.end(rawBody);
  });

// ─── Dispatcher processes ─────────────────────────────────────────────────────

export interface DispatcherProcess {
  readonly child: ChildProcess;
  readonly opsUrl: string;
  /** stdout and stderr so far, for failure messages. */
  readonly output: () => string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then waits for the exit. */
  readonly terminate: () => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL, then waits for the exit. */
  readonly kill: () => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Defaults for tests: private networks allowed (receivers are on 127.0.0.1), short timings. */
export const TEST_DISPATCHER_ENV: Readonly<Record<string, string>> = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  WEBHOOK_RETRY_SCHEDULE: "0s,200ms,200ms",
  WEBHOOK_TIMEOUT: "1s",
  WEBHOOK_LEASE: "2s",
  DISPATCHER_POLL_INTERVAL: "200ms",
  LOG_LEVEL: "warn",
};

const running = new Set<DispatcherProcess>();

/**
 * Spawns `apps/dispatcher/src/main.ts` as its own process against `databaseUrl` and waits until
 * its ops port answers `/readyz`. `env` entries override the test defaults; an `undefined` value
 * removes a default.
 */
export const startDispatcherProcess = async (
  databaseUrl: string,
  env: Record<string, string | undefined> = {},
): Promise<DispatcherProcess> => {
  const opsPort = await freePort();
  const merged: Record<string, string | undefined> = {
    ...process.env,
    ...TEST_DISPATCHER_ENV,
    DATABASE_URL: databaseUrl,
    DISPATCHER_OPS_PORT: String(opsPort),
    HOST: "127.0.0.1",
    ...env,
  };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const child = spawn(process.execPath, ["--conditions=@platter/source", MAIN], {
    env: merged,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal })),
  );
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const opsUrl = `http://127.0.0.1:${opsPort}`;
  const dispatcher: DispatcherProcess = {
    child,
    opsUrl,
    output: () => output,
    exited,
    terminate: () => {
      child.kill("SIGTERM");
      return exited;
    },
    kill: () => {
      child.kill("SIGKILL");
      return exited;
    },
  };
  running.add(dispatcher);
  void exited.then(() => running.delete(dispatcher));
  try {
    await waitFor(
      "the dispatcher to become ready",
      async () => {
        if (hasExited) throw new Error(`dispatcher exited during start:\n${output}`);
        const response = await fetch(`${opsUrl}/readyz`).catch(() => undefined);
        return response?.status === 200;
      },
      30_000,
    );
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return dispatcher;
};

/** SIGKILLs every dispatcher a test left running (for `afterEach`/`afterAll`). */
export const killLeftoverDispatchers = async (): Promise<void> => {
  await Promise.all([...running].map((d) => d.kill()));
};

// ─── Database views ───────────────────────────────────────────────────────────

export const sql = <Row = Record<string, unknown>>(db: TestDatabase, statement: string, params: unknown[] = []): Promise<Row[]> =>
  db.orm.em.getConnection().execute<Row[]>(statement, params);

/** The operator's view of an organization's deliveries (newest first), as `platter deliveries list` shows them. */
export const deliveriesOf = (db: TestDatabase, organizationId: number) =>
  db.run(
    Effect.flatMap(Operator.use((o) => o.scopeOf(organizationId)), (scope) =>
      DeliveryRepository.use((deliveries) => deliveries.list(scope, { limit: 10_000 })),
    ),
  );

export const endpointsOf = (db: TestDatabase, organizationId: number) =>
  db.run(Effect.flatMap(Operator.use((o) => o.scopeOf(organizationId)), (scope) => WebhookEndpointRepository.use((e) => e.list(scope))));

/** Waits until every delivery of the organization has left `pending`, and returns them (oldest first). */
export const settledDeliveries = async (db: TestDatabase, organizationId: number, expected: number, timeoutMs = 20_000) =>
  waitFor(
    `${expected} settled deliveries of organization ${organizationId}`,
    async () => {
      const deliveries = await deliveriesOf(db, organizationId);
      return deliveries.length === expected && deliveries.every((d) => d.status !== "pending")
        ? [...deliveries].reverse()
        : undefined;
    },
    timeoutMs,
  );

/** Inserts a draft invoice with two line items straight into the database; returns its id. */
export const insertDraftInvoice = async (db: TestDatabase, organizationId: number, number: string, status = "draft"): Promise<number> => {
  const [invoice] = await sql<{ id: string }>(
    db,
    `insert into invoices (organization_id, number, status, currency, issue_date, due_date)
     values (?, ?, ?, 'EUR', '2026-03-01', '2026-03-31') returning id`,
    [organizationId, number, status],
  );
  const id = Number(invoice!.id);
  await sql(
    db,
    `insert into invoice_line_items (organization_id, invoice_id, position, description, quantity_milli, unit_price_minor,
       tax_rate_basis_points)
     values (?, ?, 0, 'Buffet', 40000, 2550, 1900), (?, ?, 1, 'Service', 1000, 30000, 1900)`,
    [organizationId, id, organizationId, id],
  );
  return id;
};

/** Inserts an event and a draft proposal for it straight into the database; returns the proposal id. */
export const insertDraftProposal = async (db: TestDatabase, organizationId: number, title: string): Promise<number> => {
  const [event] = await sql<{ id: string }>(
    db,
    "insert into events (organization_id, name, status) values (?, 'Spring gala', 'proposed') returning id",
    [organizationId],
  );
  const [proposal] = await sql<{ id: string }>(
    db,
    "insert into proposals (organization_id, event_id, title, total_minor) values (?, ?, ?, 123456) returning id",
    [organizationId, Number(event!.id), title],
  );
  return Number(proposal!.id);
};

/** Reads a Prometheus sample value from the ops port's `/metrics` text. */
export const metricValue = (metricsText: string, sample: string): number | undefined => {
  const line = metricsText.split("\n").find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
};

/** Fresh deliveries each organization's latency test commits, at about 20 a second. */
export const FRESH = 60;

/**
 * A new organization with one endpoint at `url` (the receiver's own by default) commits `FRESH`
 * clients one by one at about 20 per second; returns each delivery's commit-to-receiver latency in ms.
 */
export const freshLatencies = async (db: TestDatabase, healthy: Receiver, url = healthy.url): Promise<number[]> => {
  const org = await createOrganization(db, "Healthy Caterers");
  await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, url, [], generateSigningSecret())));
  for (let i = 0; i < FRESH; i++) {
    await db.run(Clients.create(apiKeyActor(org.scope), { name: `Fresh ${i}` }));
    await new Promise((done) => setTimeout(done, 50));
  }
  await waitFor("every fresh delivery to arrive", async () => healthy.received.length >= FRESH || undefined, 20_000);
  const committed = await sql<{ envelope_id: string; ms: number }>(
    db,
    "select envelope_id, extract(epoch from created_at)::float8 * 1000 as ms from webhook_messages where organization_id = ?",
    [org.id],
  );
  const commitOf = new Map(committed.map((row) => [row.envelope_id, Number(row.ms)]));
  return healthy.received.map((request) => request.receivedAt - commitOf.get(request.envelope.id)!);
};

export const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1]!;
