import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type DispatcherProcess, killLeftoverDispatchers, type Receiver, sql, startDispatcherProcess, startReceiver, waitFor,
} from "./dispatcher-harness.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * What a receiver answers never breaks the record of an attempt (a NUL byte in its body), and the
 * first entry of WEBHOOK_RETRY_SCHEDULE delays the first try.
 */

let db: TestDatabase;
let dispatcher: DispatcherProcess;
const receivers: Receiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  dispatcher = await startDispatcherProcess(db.url, { WEBHOOK_RETRY_SCHEDULE: "1s,300ms" });
});

afterAll(async () => {
  if (dispatcher) expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
  await killLeftoverDispatchers();
  await Promise.all(receivers.map((r) => r.close()));
  await db?.dispose();
});

interface AttemptRow {
  status: string;
  response_body: string | null;
  first_try_after_ms: number;
}

const deliverOneTo = async (body: string) => {
  const receiver = await startReceiver(() => ({ status: 200, body }));
  receivers.push(receiver);
  const org = await createOrganization(db, "Answer Caterers");
  const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, receiver.url, [], generateSigningSecret())));
  await db.run(Clients.create(apiKeyActor(org.scope), { name: "Ada" }));
  return waitFor(
    "the delivery to succeed",
    async () => {
      const [row] = await sql<AttemptRow>(
        db,
        `select d.status, a.response_body,
           extract(epoch from (a.started_at - o.created_at)) * 1000 as first_try_after_ms
         from webhook_deliveries d join webhook_messages o on o.id = d.message_id
         join webhook_attempts a on a.delivery_id = d.id
         where d.endpoint_id = ? order by a.id limit 1`,
        [endpoint.id],
      );
      return row?.status === "succeeded" ? row : undefined;
    },
    15_000,
  );
};

describe("receiver answers and the first try", () => {
  it("records an answer whose body holds a NUL byte (stored with a replacement character)", async () => {
    const attempt = await deliverOneTo("bad\u0000bytes");
    expect(attempt.response_body).toBe("bad\uFFFDbytes");
  });

  it("waits the schedule's first delay before the first try", async () => {
    const attempt = await deliverOneTo("ok");
    expect(Number(attempt.first_try_after_ms)).toBeGreaterThanOrEqual(1000);
  });
});
