import type { DeliveryPolicy, HeldSlots } from "@platter/domain";
import type { OrgScope } from "@platter/domain";
import { seedDemo } from "@platter/application";
import { Effect } from "effect";
import { Operator } from "@platter/persistence/operator";
import { ApiKeyRepository, Sandboxes } from "@platter/persistence";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import type { TestDatabase } from "./test-database.ts";

/** Test fixtures: organizations and keys, created the way the CLI creates them. */

export interface OrganizationFixture {
  readonly id: number;
  readonly scope: OrgScope;
  readonly readKey: string;
  readonly writeKey: string;
  readonly readKeyId: number;
  readonly writeKeyId: number;
}

/** An organization with one read-only and one read/write key. */
export const createOrganization = (db: TestDatabase, name = "Test Catering", currency = "EUR"): Promise<OrganizationFixture> =>
  db.run(
    Effect.gen(function* () {
      const operator = yield* Operator;
      const keys = yield* ApiKeyRepository;
      const { id } = yield* operator.createOrganization({ name, currency });
      const scope = yield* operator.scopeOf(id);
      const read = yield* keys.create(scope, "read");
      const write = yield* keys.create(scope, "read_write");
      return { id, scope, readKey: read.key, writeKey: write.key, readKeyId: read.id, writeKeyId: write.id };
    }),
  );

/** Nothing held: a dispatcher with no attempt in flight, and a share no test reaches. */
export const nothingHeld: HeldSlots = { share: 1000, inFlight: new Map(), organizationShare: 1000, inFlightByOrganization: new Map(), originConnections: 1000, inFlightByOrigin: new Map(), originShare: 1000 };

/** A delivery policy for tests that drive the queue directly: caps and circuit far out of the way, one try at once and no retry. */
export const testDeliveryPolicy: DeliveryPolicy = {
  circuitThreshold: 1000,
  circuitCooldownMs: 30_000,
  retryScheduleMs: [0],
  failureWindowMs: 5 * 24 * 3600_000,
};

/** `testDeliveryPolicy`, retrying a failed try at once (as often as a test needs). */
export const retryingDeliveryPolicy: DeliveryPolicy = { ...testDeliveryPolicy, retryScheduleMs: Array.from({ length: 100 }, () => 0) };

/** Organization `live`'s sandbox (made with its demo data), with a read-only and a read/write `platter_test_…` key. */
export const createSandbox = (db: TestDatabase, live: OrganizationFixture): Promise<OrganizationFixture> =>
  db.run(
    Effect.gen(function* () {
      const { id } = yield* Effect.orDie((yield* Sandboxes).open(live.scope, seedDemo));
      const scope = yield* (yield* Operator).scopeOf(id);
      const keys = yield* ApiKeyRepository;
      const read = yield* keys.create(scope, "read");
      const write = yield* keys.create(scope, "read_write");
      return { id, scope, readKey: read.key, writeKey: write.key, readKeyId: read.id, writeKeyId: write.id };
    }),
  );

/** Claims every due delivery (up to 100) and records each as failed with a 500 under `policy`: one batch, one statement. Returns how many. */
export const failDueDeliveries = (db: TestDatabase, policy: DeliveryPolicy): Promise<number> =>
  db.run(Effect.gen(function* () {
    const queue = yield* DeliveryQueue;
    const { due } = yield* queue.claimDue(100, 60_000, policy, nothingHeld);
    yield* queue.recordAttempts(due.map((delivery) => ({
      delivery, startedAt: new Date(), durationMs: 3, statusCode: 500, error: undefined, responseBody: undefined, outcome: "failed" as const,
    })), policy);
    return due.length;
  }));
