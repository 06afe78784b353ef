import {
  type AttemptOutcome, type AttemptRecord, type DeliveryPolicy, deliveryAfterAttempt, type EndpointHealth, endpointAfterAttempts, NOTICE_KINDS,
  noticeWritten,
} from "@platter/domain";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ClientRepository, WebhookEndpointRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "../src/testing/index.ts";
import { RECORD, recordValues } from "../src/webhooks/delivery-queue.ts";

/**
 * The recording statement applies the domain's decisions: for any endpoint health, batch of
 * results, policy and delivery history, what it writes is what `deliveryAfterAttempt` and
 * `endpointAfterAttempts` say at the statement's `now()`, and it writes the one notice
 * `noticeWritten` says (none when the stage does not climb). Each case runs in one transaction, rolled
 * back after, so its set-up, the statement and the reading share one `now()`.
 */

let db: TestDatabase;
let org: OrganizationFixture;
let client: pg.Client;
let endpointId: number;
let deliveryIds: number[];
const POOL = 4;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db);
  endpointId = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.61/hook", [])))).id;
  for (let i = 0; i < POOL; i++) await db.run(ClientRepository.use((r) => r.create(org.scope, { name: `Client ${i}` })));
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  deliveryIds = (await client.query<{ id: string }>("select id from webhook_deliveries where endpoint_id = $1 order by id", [endpointId]))
    .rows.map((row) => Number(row.id));
});
afterAll(async () => {
  await client?.end();
  await db?.dispose();
});

/** `?` placeholders as pg numbers them. */
const numbered = (text: string) => {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
};

const ms = (column: string) => `(extract(epoch from ${column}) * 1000)::float8`;

interface DeliveryRow { id: number; status: string; attempts: number; next_ms: number; completed_ms: number | null }

const readDeliveries = async (): Promise<DeliveryRow[]> =>
  (await client.query(`select id::int, status, attempts, ${ms("next_attempt_at")} as next_ms, ${ms("completed_at")} as completed_ms
    from webhook_deliveries where endpoint_id = $1 order by id`, [endpointId])).rows;

const readHealth = async (): Promise<EndpointHealth> => {
  const [row] = (await client.query(`select consecutive_failures, ${ms("failing_since")} as failing, ${ms("circuit_open_until")} as open_until,
    enabled, disabled_reason, notice_stage from webhook_endpoints where id = $1`, [endpointId])).rows;
  return {
    consecutiveFailures: row.consecutive_failures, failingSinceMs: row.failing ?? undefined, circuitOpenUntilMs: row.open_until ?? undefined,
    enabled: row.enabled, disabledReason: row.disabled_reason, noticed: row.notice_stage,
  };
};

/** Stored times are milliseconds (timestamptz(3)); `now()` has microseconds. */
const close = (actual: number | undefined | null, expected: number | undefined) =>
  expected === undefined ? actual === undefined || actual === null : actual !== undefined && actual !== null && Math.abs(actual - expected) <= 1;

const outcome = fc.constantFrom<AttemptOutcome>("succeeded", "failed", "gone", "unsendable");

const reason = fc.constantFrom(null, "disabled by hand in the Developer area");
/** Any health; a third of the time a healthy endpoint (no failures, circuit closed), whose row is written only when a result changes it. */
const health = fc.oneof(
  fc.record({
    consecutiveFailures: fc.nat(6),
    failingSinceAgoMs: fc.option(fc.nat(400_000), { nil: undefined }),
    circuitOffsetMs: fc.option(fc.integer({ min: -60_000, max: 60_000 }), { nil: undefined }),
    enabled: fc.boolean(),
    disabledReason: reason,
    noticed: fc.constantFrom(null, ...NOTICE_KINDS),
  }),
  fc.record({
    consecutiveFailures: fc.constant(0), failingSinceAgoMs: fc.constant(undefined), circuitOffsetMs: fc.constant(undefined),
    enabled: fc.boolean(), disabledReason: reason, noticed: fc.constant(null),
  }),
);

const scenario = fc.record({
  health,
  policy: fc.record({
    circuitThreshold: fc.integer({ min: 1, max: 5 }),
    circuitCooldownMs: fc.nat(60_000),
    failureWindowMs: fc.nat(300_000),
    disableNoticeMs: fc.nat(300_000),
    notifyOperator: fc.boolean(),
    retryScheduleMs: fc.array(fc.nat(100_000), { minLength: 1, maxLength: 4 }),
  }),
  results: fc.array(fc.record({ attemptsBefore: fc.nat(4), outcome }), { minLength: 1, maxLength: POOL }),
});

describe("recordAttempts applies the domain's decisions", () => {
  it("writes, for any health, results and policy, what deliveryAfterAttempt and endpointAfterAttempts decide, and the notice it makes", async () => {
    const counted = { noticed: 0, quiet: 0 };
    await fc.assert(fc.asyncProperty(scenario, async ({ health, policy, results }) => {
      await client.query("begin");
      try {
        const [{ now_ms: nowMs }] = (await client.query(`select ${ms("now()")} as now_ms`)).rows;
        await client.query(
          `update webhook_endpoints set consecutive_failures = $2,
             failing_since = now() - $3::bigint * interval '1 millisecond', circuit_open_until = now() + $4::bigint * interval '1 millisecond',
             enabled = $5, disabled_reason = $6, notice_stage = $7 where id = $1`,
          [endpointId, health.consecutiveFailures, health.failingSinceAgoMs ?? null, health.circuitOffsetMs ?? null, health.enabled, health.disabledReason,
            health.noticed],
        );
        const leased = results.map((result, i) => ({ id: deliveryIds[i]!, ...result }));
        const tokens = new Map<number, string>();
        for (const delivery of leased) {
          const [row] = (await client.query(
            `update webhook_deliveries set status = 'pending', attempts = $2, next_attempt_at = now() - interval '1 second', completed_at = null,
               lease_token = gen_random_uuid(), lease_expires_at = now() + interval '1 minute' where id = $1 returning lease_token`,
            [delivery.id, delivery.attemptsBefore],
          )).rows;
          tokens.set(delivery.id, row.lease_token);
        }
        const healthBefore = await readHealth();
        const deliveriesBefore = await readDeliveries();
        const records: AttemptRecord[] = leased.map((delivery) => ({
          delivery: {
            id: delivery.id, organizationId: org.id, endpointId, url: "https://198.51.100.61/hook", origin: "https://198.51.100.61",
            secret: "whsec_x", envelopeId: "evt_x", body: "{}", attempt: delivery.attemptsBefore + 1, leaseToken: tokens.get(delivery.id)!, probe: false,
          },
          startedAt: new Date(), durationMs: 5, statusCode: delivery.outcome === "succeeded" ? 200 : 500, error: undefined,
          responseBody: undefined, outcome: delivery.outcome,
        }));
        const fullPolicy: DeliveryPolicy = policy;
        await client.query(numbered(RECORD), recordValues(records, fullPolicy) as unknown[]);

        const expectedHealth = endpointAfterAttempts(healthBefore, results.map((r) => r.outcome), policy, nowMs);
        const healthAfter = await readHealth();
        expect({ ...healthAfter, failingSinceMs: undefined, circuitOpenUntilMs: undefined })
          .toEqual({ ...expectedHealth, failingSinceMs: undefined, circuitOpenUntilMs: undefined });
        expect(close(healthAfter.failingSinceMs, expectedHealth.failingSinceMs), "failing since").toBe(true);
        expect(close(healthAfter.circuitOpenUntilMs, expectedHealth.circuitOpenUntilMs), "circuit open until").toBe(true);

        const notices = (await client.query(
          `select kind, operator_status, ${ms("created_at")} as at_ms, ${ms("disables_at")} as disables_ms from endpoint_notices where endpoint_id = $1`,
          [endpointId],
        )).rows;
        const notice = noticeWritten(healthBefore, expectedHealth);
        counted[notice === undefined ? "quiet" : "noticed"]++;
        expect(notices.map((row) => ({ kind: row.kind, operator_status: row.operator_status }))).toEqual(
          notice === undefined ? [] : [{ kind: notice, operator_status: policy.notifyOperator ? "pending" : "unsent" }],
        );
        expect(notices.every((row) => close(row.at_ms, nowMs)), "written at now()").toBe(true);
        expect(notices.every((row) => close(row.disables_ms, row.kind === "disabling_soon"
          ? expectedHealth.failingSinceMs! + policy.failureWindowMs : undefined)), "disables at").toBe(true);

        const deliveriesAfter = await readDeliveries();
        for (const delivery of leased) {
          const before = deliveriesBefore.find((row) => row.id === delivery.id)!;
          const after = deliveriesAfter.find((row) => row.id === delivery.id)!;
          const decided = deliveryAfterAttempt(delivery.attemptsBefore + 1, delivery.outcome, policy.retryScheduleMs, nowMs);
          expect({ status: after.status, attempts: after.attempts }).toEqual({ status: decided.status, attempts: delivery.attemptsBefore + 1 });
          expect(close(after.next_ms, decided.nextAttemptAtMs ?? before.next_ms), "next attempt").toBe(true);
          expect(close(after.completed_ms, decided.completedAtMs), "completed").toBe(true);
        }
      } finally {
        await client.query("rollback");
      }
    }), { numRuns: 200 });
    expect(counted.noticed).toBeGreaterThan(0);
    expect(counted.quiet).toBeGreaterThan(0);
  });
});
