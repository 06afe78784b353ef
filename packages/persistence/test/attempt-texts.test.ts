import { ATTEMPT_TEXT_MAX_CHARACTERS, CUT_MARKER, exampleMessage, generateSigningSecret } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createOrganization, createTestDatabase, nothingHeld, type OrganizationFixture, type TestDatabase, testDeliveryPolicy } from "@platter/testing";

/**
 * What a receiver brings (its answer's bytes, an error naming its host) is written with the
 * attempt storable and bounded, whatever the dispatcher hands over: NULs and lone surrogates
 * replaced, a megabyte cut to `ATTEMPT_TEXT_MAX_CHARACTERS` with a marker, and the batch written.
 */

let db: TestDatabase;
let org: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Receivers' Caterers");
});
afterAll(() => db?.dispose());

const execute = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

describe("an attempt's texts", () => {
  it.each<[string, string, string, string, string]>([
    ["NULs", "a\u0000b", "a\uFFFDb", "\u0000", "\uFFFD"],
    ["lone surrogates", "\uD800x\uDC00", "\uFFFDx\uFFFD", "ok\uDBFF", "ok\uFFFD"],
    [
      "a megabyte with a NUL at its end",
      `${"e".repeat(1_000_000)}\u0000`, `${"e".repeat(ATTEMPT_TEXT_MAX_CHARACTERS - 1)}${CUT_MARKER}`,
      `${"😀".repeat(600)}`, `${"😀".repeat(600)}`,
    ],
  ])("are written storable and bounded: %s", async (_label, error, storedError, body, storedBody) => {
    const endpoint = await db.run(WebhookEndpointRepository.use((all) => all.add(org.scope, `https://203.0.113.9/hook/${_label.replaceAll(" ", "-")}`, [], generateSigningSecret())));
    await db.run(WebhookEndpointRepository.use((all) => all.sendTestMessage(org.scope, endpoint.id, exampleMessage("event.created"))));
    const claimed = await db.run(Effect.gen(function* () {
      const queue = yield* DeliveryQueue;
      const { due } = yield* queue.claimDue(100, 60_000, testDeliveryPolicy, nothingHeld);
      yield* queue.recordAttempts(
        due.map((delivery) => ({ delivery, startedAt: new Date(), durationMs: 3, statusCode: 500, error, responseBody: body, outcome: "failed" as const })),
        testDeliveryPolicy,
      );
      return due.map((delivery) => delivery.id);
    }));
    expect(claimed.length).toBe(1);
    expect(await execute("select error, response_body from webhook_attempts where delivery_id = ?", [claimed[0]])).toEqual([
      { error: storedError, response_body: storedBody },
    ]);
  });
});
