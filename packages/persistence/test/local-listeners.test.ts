import { UNREADABLE_MESSAGE } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiKeyRepository, LocalListeners } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * A key's local listener on PostgreSQL: it gets deliveries only while a stream holds it, a newer
 * stream takes it over, and once its key is revoked nothing more is handed out and the stream's
 * renewal says so.
 */

let db: TestDatabase;
let org: OrganizationFixture;
const request = { forwardTo: "http://localhost:4000/hook", eventTypes: [] };

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db);
});
afterAll(() => db?.dispose());

const keyScope = (keyId: number) => ({ ...org.scope, apiKeyId: keyId });

describe("a key's listener", () => {
  it("is taken over by a newer stream: the older one's renewal says replaced and it is handed nothing", async () => {
    const scope = keyScope(org.writeKeyId);
    const [older, newer] = await db.run(Effect.gen(function* () {
      const listeners = yield* LocalListeners;
      return [yield* listeners.open(scope, request, 60_000, 5), yield* listeners.open(scope, request, 60_000, 5)] as const;
    }));
    expect(newer.id).toBe(older.id);
    expect(newer.stream).not.toBe(older.stream);
    await db.run(createClient(org.scope, { name: "Ada" }));
    expect(await db.run(LocalListeners.use((l) => l.renew(scope, older, 60_000)))).toBe("replaced");
    expect(await db.run(LocalListeners.use((l) => l.claim(scope, older, 60_000)))).toEqual([]);
    expect(await db.run(LocalListeners.use((l) => l.renew(scope, newer, 60_000)))).toBe("renewed");
    expect((await db.run(LocalListeners.use((l) => l.claim(scope, newer, 60_000)))).map((d) => d.type)).toEqual(["client.created"]);
  });

  it("hands out nothing more once its key is revoked, and its renewal says the key ended", async () => {
    const key = await db.run(ApiKeyRepository.use((keys) => keys.create(org.scope, "read_write")));
    const scope = keyScope(key.id);
    const listener = await db.run(LocalListeners.use((l) => l.open(scope, request, 60_000, 5)));
    await db.run(createClient(org.scope, { name: "Grace" }));
    await db.run(ApiKeyRepository.use((keys) => keys.revoke(org.scope, key.id)));
    expect(await db.run(LocalListeners.use((l) => l.claim(scope, listener, 60_000)))).toEqual([]);
    expect(await db.run(LocalListeners.use((l) => l.renew(scope, listener, 60_000)))).toBe("key_ended");
    const [row] = await db.orm.em.getConnection().execute<Array<{ listening: boolean }>>(
      "select listening_until > now() as listening from webhook_endpoints where id = ?", [listener.id],
    );
    expect(row).toEqual({ listening: false });
  });

  it("fails at once, as a dispatcher does, a delivery whose stored message no longer reads as its type, and hands it to nobody", async () => {
    const key = await db.run(ApiKeyRepository.use((keys) => keys.create(org.scope, "read_write")));
    const scope = keyScope(key.id);
    const listener = await db.run(LocalListeners.use((l) => l.open(scope, request, 60_000, 5)));
    await db.run(createClient(org.scope, { name: "Unreadable" }));
    const connection = db.orm.em.getConnection();
    const [delivery] = await connection.execute<Array<{ id: string; message_id: string }>>(
      "select id, message_id from webhook_deliveries where endpoint_id = ? and status = 'pending'", [listener.id],
    );
    await connection.execute("update webhook_messages set payload = '{\"v\": 99}'::jsonb where id = ?", [delivery!.message_id]);
    expect(await db.run(LocalListeners.use((l) => l.claim(scope, listener, 60_000)))).toEqual([]);
    expect(await connection.execute(
      "select d.status, d.lease_token, a.error from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id where d.id = ?", [delivery!.id],
    )).toEqual([{ status: "failed", lease_token: null, error: UNREADABLE_MESSAGE }]);
  });
});
