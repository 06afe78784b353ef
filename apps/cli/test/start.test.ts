import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { request } from "node:http";
import { connect, createServer } from "node:net";
import { createTestDatabase, freePort, type TestDatabase } from "@platter/testing";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { spawnCli, watchCli } from "./cli-process.ts";

/**
 * `platter start` (what `npm start` runs) as a real process on an empty database: first-run demo
 * data and keys, the API over HTTP with the printed key, and a graceful stop on SIGTERM.
 */

const databases: TestDatabase[] = [];
const processes: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of processes.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
afterAll(async () => {
  for (const db of databases) await db.dispose();
});

interface Started {
  readonly child: ChildProcessWithoutNullStreams;
  readonly baseUrl: string;
  readonly readKey: string;
  readonly writeKey: string;
  /** The printed sign-in link to the demo organization's Developer area. */
  readonly signInLink: string;
  readonly areaPort: number;
  readonly port: number;
  /** Everything printed on stdout so far. */
  readonly stdout: () => string;
  readonly exited: Promise<number | null>;
}

/**
 * Starts `platter start` on free ports, on a fresh empty database (a first run) or on `existing`
 * (a later run: no keys printed); resolves once it has printed its keys (on a first run) and its sign-in link.
 */
const startPlatter = async (existing?: TestDatabase): Promise<Started> => {
  const db = existing ?? (await createTestDatabase(inject("pgAdminUrl")));
  if (existing === undefined) databases.push(db);
  await db.orm.em.getConnection().execute("select 1"); // migrated, but no organization: a first run
  const port = await freePort();
  const opsPort = await freePort();
  const dispatcherOpsPort = await freePort();
  const areaPort = await freePort();
  const { child, stdout, stderr, exited } = watchCli(["start"], {
    DATABASE_URL: db.url, PORT: String(port), OPS_PORT: String(opsPort), DISPATCHER_OPS_PORT: String(dispatcherOpsPort),
    DEVELOPER_AREA_PORT: String(areaPort), DEVELOPER_AREA_PUBLIC_URL: `http://127.0.0.1:${areaPort}`,
    HOST: "127.0.0.1", SHUTDOWN_GRACE_MS: "20000",
  });
  processes.push(child);
  const keys = await new Promise<{ readKey: string; writeKey: string; signInLink: string }>((done, fail) => {
    const look = () => {
      const read = /read-only:\s+(platter_ro_[0-9a-f]{64})/.exec(stdout());
      const write = /read\/write:\s+(platter_rw_[0-9a-f]{64})/.exec(stdout());
      const link = /^ {2}(http:\/\/127\.0\.0\.1:\d+\/sign-in\/[A-Za-z0-9_-]{43})$/m.exec(stdout());
      if (link && (existing !== undefined || (read && write))) done({ readKey: read?.[1] ?? "", writeKey: write?.[1] ?? "", signInLink: link[1]! });
    };
    child.stdout.on("data", look);
    void exited.then((code) => fail(new Error(`platter start exited ${code} before printing keys:\n${stdout()}\n${stderr()}`)));
  });
  return { child, baseUrl: `http://127.0.0.1:${port}`, port, areaPort, ...keys, stdout, exited };
};

/** Opens the printed link's page, presses "Continue" (a POST from the area's origin), and returns the keys page it leads to. */
const signsIn = async (platter: Started): Promise<string> => {
  const areaOrigin = `http://127.0.0.1:${platter.areaPort}`;
  expect((await fetch(platter.signInLink, { redirect: "manual" })).status).toBe(200);
  const signIn = await fetch(platter.signInLink, { method: "POST", redirect: "manual", headers: { origin: areaOrigin } });
  expect(signIn.status).toBe(303);
  const area = await fetch(`${areaOrigin}/api-keys`, { headers: { cookie: signIn.headers.get("set-cookie")!.split(";")[0]! } });
  expect(area.status).toBe(200);
  return area.text();
};

const get = async (baseUrl: string, path: string, key: string) => {
  const response = await fetch(baseUrl + path, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as any };
};

/** Whether a new connection to the port is refused (the server stopped accepting). */
const refusesConnections = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), done(false)));
    socket.once("error", () => done(true));
  });

const waitFor = async (condition: () => boolean | Promise<boolean>): Promise<void> => {
  while (!(await condition())) await new Promise((resume) => setTimeout(resume, 25));
};

describe("platter start", () => {
  it("seeds a demo organization on first run, serves the API with the printed keys, and exits 0 on SIGTERM", async () => {
    const platter = await startPlatter();
    expect(platter.stdout()).toContain(`curl -H "Authorization: Bearer ${platter.readKey}" http://localhost:${platter.port}/v1/events`);

    const me = await get(platter.baseUrl, "/v1/me", platter.readKey);
    expect(me).toMatchObject({ status: 200, body: { name: "Demo Catering Co.", currency: "EUR" } });
    const events = await get(platter.baseUrl, "/v1/events?limit=100", platter.readKey);
    expect(events.status).toBe(200);
    expect(events.body.data.length).toBeGreaterThanOrEqual(15);
    expect(events.body.data[0]).toMatchObject({ currency: "EUR", name: expect.any(String) });
    const write = await fetch(`${platter.baseUrl}/v1/clients`, {
      method: "POST",
      headers: { authorization: `Bearer ${platter.readKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Read-only caller" }),
    });
    expect(write.status).toBe(403);

    // The Developer area runs beside the API: the printed link signs in to the demo organization's.
    expect(platter.stdout()).toContain(`Developer area:  http://127.0.0.1:${platter.areaPort}`);
    expect(await signsIn(platter)).toContain("Demo Catering Co.");

    platter.child.kill("SIGTERM");
    expect(await platter.exited).toBe(0);
  });

  it("prints a new sign-in link on every start, not only the first", async () => {
    const first = await startPlatter();
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const again = await startPlatter(databases.at(-1));
    expect(again.stdout()).not.toContain("read-only:");
    expect(again.stdout()).toContain("Sign in to the Developer area of Demo Catering Co.");
    expect(again.signInLink).not.toBe(first.signInLink);
    expect(await signsIn(again)).toContain("Demo Catering Co.");
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  });

  it("lets a request in flight at SIGTERM complete before exiting 0", async () => {
    const platter = await startPlatter();
    const body = JSON.stringify({ name: "Late arrival" });
    const response = new Promise<{ status: number; body: string }>((done, fail) => {
      const req = request(`${platter.baseUrl}/v1/clients`, {
        method: "POST",
        // One connection, closed after the response (a kept-alive idle one would hold the stop until the grace period).
        agent: false,
        headers: {
          authorization: `Bearer ${platter.writeKey}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          // The server answers "100 Continue" once it has taken the request on: it is then in flight.
          expect: "100-continue",
        },
      });
      req.once("error", fail);
      req.once("response", (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        res.once("end", () => done({ status: res.statusCode ?? 0, body: text }));
      });
      req.once("continue", async () => {
        // Half the body is sent, then the stop begins; the rest arrives only once the server stopped accepting.
        req.write(body.slice(0, 5));
        platter.child.kill("SIGTERM");
        await waitFor(() => platter.stdout().includes('"msg":"stopping"'));
        await waitFor(() => refusesConnections(platter.port));
        req.end(body.slice(5));
      });
    });
    expect(await response).toMatchObject({ status: 201, body: expect.stringMatching(/^\{"id":\d+\}$/) });
    expect(await platter.exited).toBe(0);
  });

  it.each(["PORT", "DEVELOPER_AREA_PORT"])("exits 2 with one line naming the variable when %s is already taken, and starts nothing", async (variable) => {
    const db = await createTestDatabase(inject("pgAdminUrl"));
    databases.push(db);
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
    const port = (taken.address() as { port: number }).port;
    try {
      const child = spawnCli(["start"], {
        DATABASE_URL: db.url, PORT: String(await freePort()), OPS_PORT: String(await freePort()),
        DISPATCHER_OPS_PORT: String(await freePort()), DEVELOPER_AREA_PORT: String(await freePort()), HOST: "127.0.0.1", LOG_LEVEL: "silent",
        [variable]: String(port),
      });
      processes.push(child);
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      const code = await new Promise<number | null>((done) => child.once("exit", done));
      expect(code).toBe(2);
      expect(stderr.trim()).toBe(`platter: configuration error: ${variable}: port ${port} on 127.0.0.1 is already in use; set ${variable} to a free port`);
    } finally {
      taken.close();
    }
  });
});
