import { type AttemptOutcome, type AttemptRecord, deliveryAfterAttempt, type DeliveryPolicy, deliveryToEndpoint, endpointAfterAttempts, type EndpointHealth, endpointSwitched, generateSigningSecret, NOTICE_KINDS, noticeRowWritten, type WrittenNoticeKind, SETTLED_ENDPOINT_DISABLED } from "@platter/domain";
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpointRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { switchedEndpoint } from "../src/repositories/webhook-endpoint.repository.ts";
import { RECORD, recordValues } from "../src/webhooks/attempt-record.ts";
import { createClient } from "./created-records.ts";

/**
 * The recording statement applies the domain's decisions: for any endpoint health, batch of
 * results, policy and delivery history, what it writes is what `deliveryAfterAttempt` and
 * `endpointAfterAttempts` say at the statement's `now()`, and it writes the one notice
 * `noticeRowWritten` says (none when the stage neither climbs nor ends with a success). Each case runs in one transaction, rolled
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
  endpointId = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.61/hook", [], generateSigningSecret())))).id;
  for (let i = 0; i < POOL; i++) await db.run(createClient(org.scope, { name: `Client ${i}` }));
  client = await db.rawClient();
  deliveryIds = (await client.query<{ id: string }>("select id from webhook_deliveries where endpoint_id = $1 order by id", [endpointId]))
    .rows.map((row) => Number(row.id));
});
afterAll(() => db?.dispose());

/** `?` placeholders as pg numbers them. */
const numbered = (text: string) => {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
};

const ms = (column: string) => `(extract(epoch from ${column}) * 1000)::float8`;

interface DeliveryRow { id: number; status: string; attempts: number; next_ms: number; completed_ms: number | null; settled_reason: string | null }

const readDeliveries = async (): Promise<DeliveryRow[]> =>
  (await client.query(`select id::int, status, attempts, ${ms("next_attempt_at")} as next_ms, ${ms("completed_at")} as completed_ms, settled_reason
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

/** The newest notice's id (0 for none): the notices a statement wrote are those after it. */
const lastNoticeId = async (): Promise<number> =>
  Number((await client.query("select coalesce(max(id), 0) as id from endpoint_notices")).rows[0].id);

type Policy = DeliveryPolicy & { readonly disableNoticeMs: number; readonly notifyOperator: boolean };

/**
 * Leases one delivery per result, runs the recording statement on them and checks what it wrote
 * against the domain (inside the caller's transaction, at its `now()`): the endpoint, the notice, the
 * deliveries of the batch and the endpoint's others. Returns the notice written and the endpoint after.
 */
const recordAndCheck = async (
  nowMs: number, policy: Policy, results: ReadonlyArray<{ attemptsBefore: number; outcome: AttemptOutcome }>,
): Promise<{ notice: WrittenNoticeKind | undefined; health: EndpointHealth }> => {
  const leased = results.map((result, i) => ({ id: deliveryIds[i]!, ...result }));
  const tokens = new Map<number, string>();
  const createdAts = new Map<number, string>();
  for (const delivery of leased) {
    const [row] = (await client.query(
      `update webhook_deliveries set status = 'pending', attempts = $2, next_attempt_at = now() - interval '1 second', completed_at = null,
         lease_token = gen_random_uuid(), lease_expires_at = now() + interval '1 minute' where id = $1 returning lease_token, created_at`,
      [delivery.id, delivery.attemptsBefore],
    )).rows;
    tokens.set(delivery.id, row.lease_token);
    createdAts.set(delivery.id, new Date(row.created_at).toISOString());
  }
  const healthBefore = await readHealth();
  const noticesBefore = await lastNoticeId();
  const deliveriesBefore = await readDeliveries();
  const records: AttemptRecord[] = leased.map((delivery) => ({
    delivery: {
      id: delivery.id, organizationId: org.id, endpointId, url: "https://198.51.100.61/hook", origin: "https://198.51.100.61",
      secret: "whsec_x", envelopeId: "evt_x", body: "{}", attempt: delivery.attemptsBefore + 1, leaseToken: tokens.get(delivery.id)!, probe: false,
      createdAt: createdAts.get(delivery.id)!,
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
    `select kind, operator_status, ${ms("created_at")} as at_ms, ${ms("disables_at")} as disables_ms from endpoint_notices
     where endpoint_id = $1 and id > $2`,
    [endpointId, noticesBefore],
  )).rows;
  const notice = noticeRowWritten(healthBefore, expectedHealth);
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
    const decided = deliveryToEndpoint(
      deliveryAfterAttempt(delivery.attemptsBefore + 1, delivery.outcome, policy.retryScheduleMs, nowMs), expectedHealth.enabled, nowMs,
    );
    expect({ status: after.status, attempts: after.attempts, settled_reason: after.settled_reason })
      .toEqual({ status: decided.status, attempts: delivery.attemptsBefore + 1, settled_reason: decided.settledReason ?? null });
    expect(close(after.next_ms, decided.nextAttemptAtMs ?? before.next_ms), "next attempt").toBe(true);
    expect(close(after.completed_ms, decided.completedAtMs), "completed").toBe(true);
  }
  // The endpoint's other deliveries: ended when this batch disabled it, untouched otherwise.
  const disabledNow = healthBefore.enabled && !expectedHealth.enabled;
  for (const after of deliveriesAfter.filter((row) => !leased.some((delivery) => delivery.id === row.id))) {
    const before = deliveriesBefore.find((row) => row.id === after.id)!;
    expect({ status: after.status, settled_reason: after.settled_reason }).toEqual(disabledNow && before.status === "pending"
      ? { status: "failed", settled_reason: SETTLED_ENDPOINT_DISABLED }
      : { status: before.status, settled_reason: before.settled_reason });
  }
  return { notice, health: expectedHealth };
};

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

const policy = fc.record({
  circuitThreshold: fc.integer({ min: 1, max: 5 }),
  circuitCooldownMs: fc.nat(60_000),
  failureWindowMs: fc.nat(300_000),
  disableNoticeMs: fc.nat(300_000),
  notifyOperator: fc.boolean(),
  retryScheduleMs: fc.array(fc.nat(100_000), { minLength: 1, maxLength: 4 }),
});

const scenario = fc.record({
  health,
  policy,
  results: fc.array(fc.record({ attemptsBefore: fc.nat(4), outcome }), { minLength: 1, maxLength: POOL }),
});

/** Mostly failures, so runs of failures reach their notices; sometimes a success ends one. */
const mostlyFailing = fc.constantFrom<AttemptOutcome>("failed", "failed", "failed", "failed", "gone", "succeeded", "unsendable");

/** A step of an endpoint's life: a batch of results some time after the last step, or enabling or disabling it by hand. */
const step = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant("attempts" as const),
      gapMs: fc.nat(200_000),
      results: fc.array(fc.record({ attemptsBefore: fc.nat(4), outcome: mostlyFailing }), { minLength: 1, maxLength: POOL }),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constantFrom("enable" as const, "disable" as const) }), weight: 1 },
);

const BY_HAND = "disabled by hand in the Developer area";

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
        counted[(await recordAndCheck(nowMs, policy, results)).notice === undefined ? "quiet" : "noticed"]++;
      } finally {
        await client.query("rollback");
      }
    }), { numRuns: 200 });
    expect(counted.noticed).toBeGreaterThan(0);
    expect(counted.quiet).toBeGreaterThan(0);
  });
});

describe("recordAttempts and enabling or disabling, in sequence", () => {
  it("starts the run over on enable and disable as endpointSwitched says, and writes at most one notice of each kind per run", async () => {
    const counted = { noticedAfterSwitch: 0, switchedWhileFailing: 0 };
    await fc.assert(fc.asyncProperty(policy, fc.array(step, { minLength: 2, maxLength: 14 }), async (policy, steps) => {
      await client.query("begin");
      try {
        const [{ now_ms: nowMs }] = (await client.query(`select ${ms("now()")} as now_ms`)).rows;
        await client.query(
          `update webhook_endpoints set consecutive_failures = 0, failing_since = null, circuit_open_until = null, enabled = true,
             disabled_reason = null, notice_stage = null where id = $1`,
          [endpointId],
        );
        // A run of failures: since the sequence began, the last success, or the last enable or disable.
        let noticedInRun = new Set<WrittenNoticeKind>();
        let failuresInRun = 0;
        let afterSwitch = false;
        for (const next of steps) {
          if (next.kind === "attempts") {
            // Time passes (one transaction has one now()): the endpoint's times move back instead.
            await client.query(
              `update webhook_endpoints set failing_since = failing_since - $2::bigint * interval '1 millisecond',
                 circuit_open_until = circuit_open_until - $2::bigint * interval '1 millisecond' where id = $1`,
              [endpointId, next.gapMs],
            );
            const { notice } = await recordAndCheck(nowMs, policy, next.results);
            failuresInRun += next.results.filter((result) => result.outcome === "failed" || result.outcome === "gone").length;
            if (notice !== undefined) {
              expect(noticedInRun.has(notice), `a second ${notice} notice in one run`).toBe(false);
              noticedInRun.add(notice);
              // One transient failure is not failing: the circuit opens on this run's failures alone.
              if (notice === "failing") expect(failuresInRun).toBeGreaterThanOrEqual(policy.circuitThreshold);
              if (afterSwitch) counted.noticedAfterSwitch++;
            }
            if (next.results.some((result) => result.outcome === "succeeded")) {
              noticedInRun = new Set();
              failuresInRun = 0;
            }
          } else {
            const enabled = next.kind === "enable";
            if (failuresInRun > 0) counted.switchedWhileFailing++;
            const set = switchedEndpoint(enabled, BY_HAND);
            await client.query(numbered(`update webhook_endpoints w set ${set.text} where w.id = ?`), [...set.values, endpointId]);
            expect(await readHealth()).toEqual(endpointSwitched(enabled, BY_HAND));
            noticedInRun = new Set();
            failuresInRun = 0;
            afterSwitch = true;
          }
        }
      } finally {
        await client.query("rollback");
      }
    }), { numRuns: 80 });
    expect(counted.noticedAfterSwitch).toBeGreaterThan(0);
    expect(counted.switchedWhileFailing).toBeGreaterThan(0);
  });
});
