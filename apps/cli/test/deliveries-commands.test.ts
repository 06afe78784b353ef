import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebhookEndpointRepository } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { WebhookDispatcher } from "@platter/webhooks";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { runCli, runCliFailing, runCliJson } from "./cli-process.ts";
import { BusinessActions } from "@platter/application";
import { generateSigningSecret, operatorActor } from "@platter/domain";

/**
 * `platter deliveries list|retry` as real processes. The deliveries are made by a real dispatcher,
 * run in this process only until it has settled them, against a receiver on 127.0.0.1 whose `/ok`
 * accepts and whose `/failing` answers 500.
 */

let db: TestDatabase;
let env: Record<string, string>;
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  env = { DATABASE_URL: db.url };
  receiver = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (request.url === "/ok") response.writeHead(204).end();
      else response.writeHead(500, { "content-type": "text/plain" }).end("kitchen on fire");
    });
  });
  await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((done) => receiver?.close(done));
  await db?.dispose();
});

const rows = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);

const statusesOf = async (deliveryIds: readonly number[]) =>
  rows<{ id: number; status: string }>("select id::int, status from webhook_deliveries where id = any(?::bigint[]) order by id", [
    `{${deliveryIds.join(",")}}`,
  ]);

/** One try per delivery, no retries: a 500 leaves the delivery failed at once. */
const ONE_TRY = {
  signatureHeader: "x-platter-signature",
  timeoutMs: 5_000,
  allowPrivateNetworks: true,
  concurrency: 4,
  retryScheduleMs: [0],
  leaseMs: 30_000,
  failureWindowMs: 24 * 60 * 60 * 1000,
  pollIntervalMs: 50,
  endpointConcurrency: 4,
  circuitThreshold: 1000,
  circuitCooldownMs: 30_000,
};

/** Runs a dispatcher until none of the organization's deliveries is pending. */
const deliverEverything = async (organizationId: number): Promise<void> => {
  const dispatcher = new WebhookDispatcher(await db.run(DeliveryQueue.use(Effect.succeed)), ONE_TRY);
  dispatcher.start();
  try {
    await vi.waitFor(
      async () => {
        const [left] = await rows<{ n: number }>(
          "select count(*) as n from webhook_deliveries where organization_id = ? and status = 'pending'",
          [organizationId],
        );
        expect(Number(left!.n)).toBe(0);
      },
      { timeout: 20_000, interval: 50 },
    );
  } finally {
    await dispatcher.stop();
  }
};

/** Records business events (inquiries) for the organization, each an outbox row. */
const recordInquiries = async (organizationId: number, names: readonly string[]): Promise<void> => {
  const scope = await db.run(Operator.use((o) => o.scopeOf(organizationId)));
  for (const name of names) await db.run(BusinessActions.receiveInquiry(operatorActor(scope, "tests"), { name }));
};

interface DeliveredOrganization {
  readonly id: number;
  readonly okEndpoint: number;
  readonly failingEndpoint: number;
  /** Delivery ids of each endpoint, oldest first. */
  readonly succeeded: number[];
  readonly failed: number[];
}

/** An organization with an accepting and a failing endpoint, and `events` events delivered to both. */
const deliveredOrganization = async (events = 2): Promise<DeliveredOrganization> => {
  const { id, scope } = await createOrganization(db, "Delivery Test");
  const ok = await db.run(WebhookEndpointRepository.use((e) => e.add(scope, `${receiverUrl}/ok`, [], generateSigningSecret())));
  const failing = await db.run(WebhookEndpointRepository.use((e) => e.add(scope, `${receiverUrl}/failing`, [], generateSigningSecret())));
  await recordInquiries(id, Array.from({ length: events }, (_, i) => `Guest ${i + 1}`));
  await deliverEverything(id);
  const deliveries = await rows<{ id: number; endpoint_id: number }>(
    "select id::int, endpoint_id::int from webhook_deliveries where organization_id = ? order by id",
    [id],
  );
  return {
    id,
    okEndpoint: ok.id,
    failingEndpoint: failing.id,
    succeeded: deliveries.filter((d) => d.endpoint_id === ok.id).map((d) => d.id),
    failed: deliveries.filter((d) => d.endpoint_id === failing.id).map((d) => d.id),
  };
};

describe("platter deliveries list", () => {
  let org: DeliveredOrganization;
  beforeAll(async () => {
    org = await deliveredOrganization();
    await deliveredOrganization(1); // another organization's deliveries, never listed with these
  });

  const list = async (...filters: string[]) =>
    (await runCliJson(["deliveries", "list", "--org", String(org.id), ...filters], env)).deliveries;

  it("lists the organization's deliveries, newest first, each with its attempts", async () => {
    const deliveries = await list();
    const [first, second] = org.succeeded;
    const [firstFailed, secondFailed] = org.failed;
    expect(deliveries.map((d: { id: number }) => d.id)).toEqual([first!, second!, firstFailed!, secondFailed!].sort((a, b) => b - a));

    const accepted = deliveries.find((d: { id: number }) => d.id === first);
    expect(accepted).toEqual({
      id: first,
      endpoint_id: org.okEndpoint,
      envelope_id: expect.stringMatching(/^evt_/),
      event_type: "event.inquiry",
      status: "succeeded",
      next_attempt_at: null,
      created_at: expect.any(String),
      replayable: true,
      attempts: [
        {
          attempt: 1, started_at: expect.any(String), duration_ms: expect.any(Number), status_code: 204, error: null,
          response_body: "", next_attempt_at: null,
        },
      ],
    });
    const refused = deliveries.find((d: { id: number }) => d.id === firstFailed);
    expect(refused).toMatchObject({ endpoint_id: org.failingEndpoint, status: "failed", next_attempt_at: null });
    expect(refused.attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 500, response_body: "kitchen on fire", next_attempt_at: null }),
    ]);
  });

  it.each([
    { status: "failed", expected: (o: DeliveredOrganization) => o.failed },
    { status: "succeeded", expected: (o: DeliveredOrganization) => o.succeeded },
    { status: "pending", expected: () => [] },
  ])("filters by --status $status", async ({ status, expected }) => {
    const deliveries = await list("--status", status);
    expect(deliveries.map((d: { id: number }) => d.id)).toEqual([...expected(org)].reverse());
  });

  it("filters by endpoint", async () => {
    const deliveries = await list("--endpoint", String(org.failingEndpoint));
    expect(deliveries.map((d: { id: number }) => d.id)).toEqual([...org.failed].reverse());
    expect(deliveries.every((d: { endpoint_id: number }) => d.endpoint_id === org.failingEndpoint)).toBe(true);
  });

  it("refuses an unknown status with exit 2", async () => {
    const result = await runCliFailing(["deliveries", "list", "--org", String(org.id), "--status", "bogus"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--status must be one of pending, succeeded, failed, got "bogus"');
  });
});

describe("platter deliveries retry --id", () => {
  it("makes a failed delivery pending again, keeping its attempts", async () => {
    const org = await deliveredOrganization(1);
    const [failed] = org.failed;
    expect(await runCliJson(["deliveries", "retry", "--id", String(failed)], env)).toEqual({ retried: 1 });
    const [stored] = await rows<{ status: string; completed_at: string | null; due: boolean; attempts: number }>(
      `select status, completed_at, next_attempt_at <= now() as due,
         (select count(*)::int from webhook_attempts a where a.delivery_id = d.id) as attempts
       from webhook_deliveries d where id = ?`,
      [failed],
    );
    expect(stored).toEqual({ status: "pending", completed_at: null, due: true, attempts: 1 });
  });

  it("tries a delivery waiting to retry now, changing nothing but its next attempt", async () => {
    const org = await deliveredOrganization(1);
    const [failed] = org.failed;
    await rows("update webhook_deliveries set status = 'pending', completed_at = null, next_attempt_at = now() + interval '1 hour' where id = ?", [failed]);
    const before = await rows("select status, attempts, completed_at from webhook_deliveries where id = ?", [failed]);
    expect(await runCliJson(["deliveries", "retry", "--id", String(failed)], env)).toEqual({ retried: 1 });
    expect(await rows("select status, attempts, completed_at from webhook_deliveries where id = ?", [failed])).toEqual(before);
    expect(await rows("select next_attempt_at <= now() as due from webhook_deliveries where id = ?", [failed])).toEqual([{ due: true }]);
  });

  it("leaves a delivery that is already due as it was, and says so (exit 0, retried 0)", async () => {
    const { id, scope } = await createOrganization(db, "Pending Test");
    await db.run(WebhookEndpointRepository.use((e) => e.add(scope, `${receiverUrl}/ok`, [], generateSigningSecret())));
    await recordInquiries(id, ["Still Waiting"]);
    // A delivery exists (recorded with its message, due at once); nothing has attempted it.
    const [pending] = await rows<{ id: number }>("select id::int from webhook_deliveries where organization_id = ?", [id]);
    const before = await rows("select status, attempts, next_attempt_at from webhook_deliveries where id = ?", [pending!.id]);

    expect(await runCliJson(["deliveries", "retry", "--id", String(pending!.id)], env)).toEqual({ retried: 0 });
    const text = await runCli(["deliveries", "retry", "--id", String(pending!.id)], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`delivery ${pending!.id} is already due: nothing changed`);
    expect(await rows("select status, attempts, next_attempt_at from webhook_deliveries where id = ?", [pending!.id])).toEqual(before);
  });

  it("fails with exit 1 for an unknown delivery", async () => {
    const result = await runCliFailing(["deliveries", "retry", "--id", "999999"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("delivery 999999 does not exist");
  });
});

describe("platter deliveries retry --all-failed", () => {
  it("tries a delivery of the endpoint waiting to retry now, and leaves one already due alone", async () => {
    const org = await deliveredOrganization(2);
    const [waiting, due] = org.failed;
    await rows("update webhook_deliveries set status = 'pending', completed_at = null, next_attempt_at = now() + interval '1 hour' where id = ?", [waiting]);
    await rows("update webhook_deliveries set status = 'pending', completed_at = null, next_attempt_at = now() - interval '1 second' where id = ?", [due]);
    const result = await runCliJson(["deliveries", "retry", "--all-failed", "--endpoint", String(org.failingEndpoint)], env);
    expect(result).toEqual({ retried: 1 });
    expect(await rows("select next_attempt_at <= now() as due from webhook_deliveries where id = ?", [waiting])).toEqual([{ due: true }]);
  });

  it("makes every failed delivery of the endpoint pending again, and no other", async () => {
    const org = await deliveredOrganization(3);
    const other = await deliveredOrganization(1);
    const result = await runCliJson(["deliveries", "retry", "--all-failed", "--endpoint", String(org.failingEndpoint)], env);
    expect(result).toEqual({ retried: 3 });
    expect(await statusesOf(org.failed)).toEqual(org.failed.map((id) => ({ id, status: "pending" })));
    expect(await statusesOf(org.succeeded)).toEqual(org.succeeded.map((id) => ({ id, status: "succeeded" })));
    expect(await statusesOf(other.failed)).toEqual(other.failed.map((id) => ({ id, status: "failed" })));
  });

  it.each([
    { args: ["deliveries", "retry"], message: "give --id <delivery>, or --all-failed --endpoint <id>" },
    { args: ["deliveries", "retry", "--all-failed"], message: '--endpoint must be a positive integer, got ""' },
    { args: ["deliveries", "retry", "--all-failed", "--endpoint", "1", "--id", "1"], message: "give either --id or --all-failed, not both" },
  ])("answers `$message` with exit 2", async ({ args, message }) => {
    const result = await runCliFailing(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});

describe("unknown organizations and endpoints", () => {
  it("fails with exit 1 when retrying the failed deliveries of an unknown endpoint", async () => {
    const result = await runCliFailing(["deliveries", "retry", "--all-failed", "--endpoint", "999999"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("endpoint 999999 does not exist");
  });

  it.each([
    ["deliveries", "list"],
    ["webhook", "list"],
  ])("fails with exit 1 for `%s %s` of an unknown organization", async (group, command) => {
    const result = await runCliFailing([group, command, "--org", "999999"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("organization 999999 does not exist");
  });
});
