import type { AttemptOutcome, DeliveryPolicy } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import { nothingHeld, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/** Endpoints in each notice's state, made by the delivery queue itself (attempts recorded as the dispatcher records them). */

const policy: DeliveryPolicy = {
  circuitThreshold: 1, circuitCooldownMs: 60_000, retryScheduleMs: [0, 0, 0], failureWindowMs: 5 * 24 * 3_600_000,
  disableNoticeMs: 24 * 3_600_000, notifyOperator: false,
};

/** A URL whose query is markup: the pages must show it as text. */
export const MARKUP_URL = "https://198.51.100.9/hook?x=<img src=x onerror=alert(1)>";

/** Records one attempt of every due delivery of the database with `outcome`. */
const attemptAll = (db: TestDatabase, outcome: AttemptOutcome) =>
  db.run(Effect.gen(function* () {
    const queue = yield* DeliveryQueue;
    const { due } = yield* queue.claimDue(100, 60_000, policy, nothingHeld);
    yield* queue.recordAttempts(due.map((delivery) => ({
      delivery, startedAt: new Date(), durationMs: 3, statusCode: outcome === "gone" ? 410 : 500, error: undefined, responseBody: undefined, outcome,
    })), policy);
  }));

/**
 * Three endpoints of `org`: one failing (its circuit open), one about to be disabled (failing for 4
 * of its 5 days), one disabled by a 410; plus a healthy one. Returns their ids.
 */
export const endpointsWithNotices = async (db: TestDatabase, org: OrganizationFixture) => {
  const add = (url: string) => db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, url, ["client.created"], generateSigningSecret())));
  const failing = await add(MARKUP_URL);
  await db.run(Clients.create(apiKeyActor(org.scope), { name: "Ada" }));
  await attemptAll(db, "failed");
  const soon = await add("https://198.51.100.10/soon");
  await db.run(Clients.create(apiKeyActor(org.scope), { name: "Grace" }));
  const sql = (text: string, params: unknown[]) => db.orm.em.getConnection().execute(text, params);
  // Only the new endpoint's delivery is due: the failing one's circuit is open.
  await sql("update webhook_endpoints set failing_since = now() - interval '4 days 1 hour', consecutive_failures = 5 where id = ?", [soon.id]);
  await attemptAll(db, "failed");
  const gone = await add("https://198.51.100.11/gone");
  await db.run(Clients.create(apiKeyActor(org.scope), { name: "Edsger" }));
  await sql("update webhook_deliveries set next_attempt_at = now() + interval '1 day' where endpoint_id <> ? and status = 'pending'", [gone.id]);
  await attemptAll(db, "gone");
  const healthy = await add("https://198.51.100.12/fine");
  return { failing: failing.id, soon: soon.id, gone: gone.id, healthy: healthy.id };
};
