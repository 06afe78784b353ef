import { exampleMessage, generateSigningSecret, type OrgScope } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { AlertRecipientStore, RequestLog, ApiKeyRepository, ClientRepository, DeliveryRepository, AuditLog, type DeveloperSession, DeveloperSessions, EventRepository, IdempotencyKeys, inOneTransaction, InvoiceRepository, type ListenerDelivery, LocalListeners, type OpenedListener, OrganizationRepository, type Persistence, RecipeRepository, Sandboxes, WebhookEndpointRepository, WebhookMessages } from "../src/index.ts";
import { BusinessRecords, Operator } from "../src/operator.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { ORGANIZATION_TABLES } from "../src/org-sql.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase, nothingHeld, testDeliveryPolicy } from "@platter/testing";
import { createClient } from "./created-records.ts";
import { DemoData, seedDemo } from "@platter/application";
import { Seeding } from "@platter/seeds";

/**
 * Isolation by construction, proven: organization A has rows in every organization-owned table;
 * then every method of every scoped storage service runs with organization B's scope (aimed at A's
 * records where it takes an id), and A's rows must be exactly as they were, and nothing B reads or
 * counts may name one of A's records.
 */

let db: TestDatabase;
let a: OrganizationFixture;
let b: OrganizationFixture;
/** Ids of A's records, one of each kind a method can be aimed at. */
let target: Record<"event" | "recipe" | "invoice" | "draftInvoice" | "proposal" | "endpoint" | "delivery" | "apiKey" | "alertRecipient", number>;
/** A Developer-area session of A (a link used, a session open, an action audited). */
let sessionOfA: DeveloperSession;
/** A's key's local listener, connected, holding one delivery's lease. */
let listenerOfA: OpenedListener;
let leasedByA: ListenerDelivery;

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** Every row of organization `id`, table by table, as PostgreSQL stores it. */
const snapshot = async (id: number): Promise<Record<string, unknown[]>> => {
  const tables: Record<string, unknown[]> = {};
  for (const [table, column] of Object.entries(ORGANIZATION_TABLES)) {
    tables[table] = await rows(`select to_jsonb(t) as row from ${table} t where t.${column} = ? order by to_jsonb(t)::text`, [id]);
  }
  return tables;
};

/** The ids of `table` that belong to organization `id`. */
const idsOf = async (table: string, id: number): Promise<Set<number>> =>
  new Set((await rows<{ id: string }>(`select id from ${table} where organization_id = ?`, [id])).map((row) => Number(row.id)));

const run = <A, E>(program: Effect.Effect<A, E, Persistence>) => db.run(program);
const notFound = <A, E>(program: Effect.Effect<A, E, Persistence>) =>
  expect(run(program)).rejects.toMatchObject({ _tag: "NotFound" });

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  a = await createOrganization(db, "Organization A");
  b = await createOrganization(db, "Organization B");
  await db.run(
    Effect.gen(function* () {
      for (const org of [a, b]) {
        yield* DemoData.seed(org.scope);
        yield* (yield* WebhookEndpointRepository).add(org.scope, `https://org-${org.id}.example/hook`, [], generateSigningSecret());
        // Only A uses this Idempotency-Key; B's create below reuses it.
        const ada = yield* createClient(org.scope, { name: "Ada" });
        if (org === a) yield* inOneTransaction(IdempotencyKeys.use((keys) => keys.remember(org.scope, { key: "shared-key", fingerprint: "f-a" }, ada.id)));
        const sessions = yield* DeveloperSessions;
        const session = yield* sessions.authenticate(
          (yield* sessions.signIn((yield* sessions.createLink(org.scope, "cli")).token, org === a ? "A's laptop" : "B's laptop")).token,
        );
        yield* (yield* AuditLog).record(session, "api_key.created", "api_key 1");
        yield* (yield* RequestLog).append([{
          organization_id: org.id, api_key_id: org.readKeyId, at: new Date().toISOString(), method: "GET", route: "/v1/me", status: 200,
          duration_ms: 2, request_id: `req_${org.id}`, error: null,
        }]);
        if (org === a) yield* (yield* AuditLog).record(session, "webhook_endpoint.disabled", "webhook_endpoint 1");
        if (org === a) sessionOfA = session;
        // An alert address, confirmed: the notices below are fanned out to it.
        const alerts = yield* AlertRecipientStore;
        yield* alerts.confirm((yield* inOneTransaction(alerts.add(org.scope, `dev@org-${org.id}.example`))).token);
      }
      // Each message delivered to its organization's endpoint, attempted once and failed for good: deliveries and attempts;
      // the circuit opening at the first failure writes each endpoint's notice.
      const queue = yield* DeliveryQueue;
      const claimed = (yield* queue.claimDue(100, 60_000, testDeliveryPolicy, nothingHeld)).due;
      yield* queue.recordAttempts(
        claimed.map((delivery) => ({
          delivery, startedAt: new Date(), durationMs: 5, statusCode: 500, error: undefined, responseBody: "no", outcome: "failed",
        })),
        { ...testDeliveryPolicy, circuitThreshold: 1 },
      );
      // Each notice's alert e-mail to its organization's confirmed address.
      yield* queue.alertMails().fanOut();
    }),
  );
  // A's write key listens (`platter listen`); a new client's message is handed to its stream.
  const keyOfA = { ...a.scope, apiKeyId: a.writeKeyId };
  await db.run(Effect.gen(function* () {
    const listeners = yield* LocalListeners;
    listenerOfA = yield* listeners.open(keyOfA, { forwardTo: "http://localhost:4000/hook", eventTypes: [] }, 60_000, 5);
    yield* createClient(a.scope, { name: "Heard by A's listener" });
    const [leased] = yield* listeners.claim(keyOfA, listenerOfA, 60_000);
    if (leased === undefined) return yield* Effect.die(new Error("A's listener was handed nothing"));
    leasedByA = leased;
  }));
  const first = async (statement: string) => Number((await rows<{ id: string }>(statement, [a.id]))[0]!.id);
  target = {
    event: await first("select id from events where organization_id = ? order by id limit 1"),
    recipe: await first("select id from recipes where organization_id = ? order by id limit 1"),
    invoice: await first("select id from invoices where organization_id = ? order by id limit 1"),
    draftInvoice: await first("select id from invoices where organization_id = ? and status = 'draft' order by id limit 1"),
    proposal: await first("select id from proposals where organization_id = ? and status in ('draft', 'sent') order by id limit 1"),
    endpoint: await first("select id from webhook_endpoints where organization_id = ? order by id limit 1"),
    delivery: await first("select id from webhook_deliveries where organization_id = ? and status = 'failed' order by id limit 1"),
    apiKey: a.readKeyId,
    alertRecipient: await first("select id from alert_recipients where organization_id = ? order by id limit 1"),
  };
});
afterAll(() => db?.dispose());

/** Every method of every scoped service, run with B's scope; each case states what B may see. */
const cases = (scope: OrgScope) => ({
  ApiKeyRepository: {
    create: () => run(ApiKeyRepository.use((r) => r.create(scope, "read"))),
    // B's working keys only: A's are neither counted nor locked.
    lockForCreation: async () => {
      const counted = await run(inOneTransaction(ApiKeyRepository.use((r) => r.lockForCreation(scope))));
      const [own] = await rows<{ n: number }>(
        "select count(*)::int as n from api_keys where organization_id = ? and revoked_at is null and replaced_by is null and (expires_at is null or expires_at > now())",
        [scope.organizationId],
      );
      expect(counted).toBe(own!.n);
    },
    revoke: () => notFound(ApiKeyRepository.use((r) => r.revoke(scope, target.apiKey))),
    list: async () => expectOnlyB("api_keys", (await run(ApiKeyRepository.use((r) => r.list(scope)))).map((k) => k.id)),
    find: () => notFound(ApiKeyRepository.use((r) => r.find(scope, target.apiKey))),
    roll: () => notFound(ApiKeyRepository.use((r) => r.roll(scope, target.apiKey, 0))),
    // Even a scope naming A's key id marks nothing of A's: the update is confined to B's keys.
    recordWrite: async () => {
      await run(ApiKeyRepository.use((r) => r.recordWrite({ ...scope, apiKeyId: target.apiKey })));
      expect(await rows("select id from api_keys where organization_id = ? and wrote_at is not null", [a.id])).toEqual([]);
    },
  },
  OrganizationRepository: {
    current: async () => expect((await run(OrganizationRepository.use((r) => r.current(scope)))).id).toBe(b.id),
  },
  EventRepository: {
    list: async () => expectOnlyB("events", (await run(EventRepository.use((r) => r.list(scope, { limit: 500, after: undefined })))).data.map((e) => e.id)),
    get: () => notFound(EventRepository.use((r) => r.get(scope, target.event))),
    insert: async () => expectOnlyB("events", [await run(EventRepository.use((r) => r.insert(scope, {
      clientId: null, name: "B's gala", eventDate: null, guests: null, pricePerHeadMinor: null, eventType: null,
    })))]),
    read: () => notFound(EventRepository.use((r) => r.read(scope, target.event))),
  },
  RecipeRepository: {
    list: async () => expectOnlyB("recipes", (await run(RecipeRepository.use((r) => r.list(scope, { limit: 500, after: undefined })))).data.map((e) => e.id)),
    get: () => notFound(RecipeRepository.use((r) => r.get(scope, target.recipe))),
  },
  ClientRepository: {
    list: async () => expectOnlyB("clients", (await run(ClientRepository.use((r) => r.list(scope, { limit: 500, after: undefined })))).data.map((c) => c.id)),
    insert: async () => expectOnlyB("clients", [await run(ClientRepository.use((r) => r.insert(scope, { name: "Bea" })))]),
    read: async () => {
      const [clientOfA] = await idsOf("clients", a.id);
      await notFound(ClientRepository.use((r) => r.read(scope, clientOfA!)));
    },
  },
  IdempotencyKeys: {
    // A's Idempotency-Key is not B's: the same key is new to B (another body would be refused were it A's).
    earlier: async () =>
      expect(await run(inOneTransaction(IdempotencyKeys.use((keys) => keys.earlier(scope, { key: "shared-key", fingerprint: "f-b" }))))).toBeUndefined(),
    remember: () => run(IdempotencyKeys.use((keys) => keys.remember(scope, { key: "b-key", fingerprint: "f-b" }, 1))),
  },
  WebhookMessages: {
    record: async () => expectOnlyB("webhook_messages", [await run(WebhookMessages.use((messages) => messages.record(scope, exampleMessage("client.created"))))]),
    // B's feed holds B's messages only (by their envelope ids), none of A's.
    feed: async () => {
      const page = await run(WebhookMessages.use((messages) => messages.feed(scope, { eventTypes: [] }, { limit: 500, after: undefined })));
      const envelopes = page.data.map((m) => m.id);
      const own = await rows<{ envelope_id: string }>("select envelope_id from webhook_messages where organization_id = ?", [b.id]);
      expect(envelopes.length).toBeGreaterThan(0);
      expect(envelopes.filter((id) => !own.some((row) => row.envelope_id === id))).toEqual([]);
    },
  },
  InvoiceRepository: {
    list: async () => expectOnlyB("invoices", (await run(InvoiceRepository.use((r) => r.list(scope, { limit: 500, after: undefined })))).data.map((i) => i.id)),
    get: () => notFound(InvoiceRepository.use((r) => r.get(scope, target.invoice))),
  },
  WebhookEndpointRepository: {
    add: () => run(WebhookEndpointRepository.use((r) => r.add(scope, "https://b.example/hook", [], generateSigningSecret()))),
    lockForRegistration: async () =>
      expectOnlyB("webhook_endpoints", (await run(inOneTransaction(WebhookEndpointRepository.use((r) => r.lockForRegistration(scope))))).map((e) => e.id)),
    list: async () => expectOnlyB("webhook_endpoints", (await run(WebhookEndpointRepository.use((r) => r.list(scope)))).map((e) => e.id)),
    setEnabled: () => notFound(WebhookEndpointRepository.use((r) => r.setEnabled(scope, target.endpoint, false))),
    setThrottle: () => notFound(WebhookEndpointRepository.use((r) => r.setThrottle(scope, target.endpoint, 1))),
    lockForEdit: () => notFound(inOneTransaction(WebhookEndpointRepository.use((r) => r.lockForEdit(scope, target.endpoint)))),
    edit: () => notFound(WebhookEndpointRepository.use((r) => r.edit(scope, target.endpoint, { url: "https://b.example/edited", eventTypes: [], description: "B's" }))),
    rotateSecret: () => notFound(WebhookEndpointRepository.use((r) => r.rotateSecret(scope, target.endpoint, 86_400_000, generateSigningSecret()))),
    overview: async () => expectOnlyB("webhook_endpoints", (await run(WebhookEndpointRepository.use((r) => r.overview(scope)))).map((e) => e.id)),
    find: () => notFound(WebhookEndpointRepository.use((r) => r.find(scope, target.endpoint))),
    activeNotices: async () => {
      const notices = await run(WebhookEndpointRepository.use((r) => r.activeNotices(scope)));
      expect(notices.length).toBeGreaterThan(0);
      await expectOnlyB("webhook_endpoints", notices.map((n) => n.endpoint_id));
    },
    secret: () => notFound(WebhookEndpointRepository.use((r) => r.secret(scope, target.endpoint))),
    sendTestMessage: () => notFound(WebhookEndpointRepository.use((r) => r.sendTestMessage(scope, target.endpoint, exampleMessage("event.created")))),
    delivery: () => notFound(WebhookEndpointRepository.use((r) => r.delivery(scope, target.endpoint, target.delivery))),
    // A's endpoint named under B's scope: not B's to delete (its row, secret and pending deliveries stay as they were).
    delete: () => notFound(WebhookEndpointRepository.use((r) => r.delete(scope, target.endpoint))),
  },
  DeliveryRepository: {
    list: async () => {
      const deliveries = await run(DeliveryRepository.use((r) => r.list(scope, { limit: 1000 })));
      await expectOnlyB("webhook_deliveries", deliveries.map((d) => d.id));
    },
    log: async () => {
      const page = await run(DeliveryRepository.use((r) => r.log(scope, {}, { limit: 500, after: undefined })));
      await expectOnlyB("webhook_deliveries", page.data.map((d) => d.id));
    },
    message: async () => {
      const [message] = await rows<{ envelope_id: string }>("select envelope_id from webhook_messages where organization_id = ? order by id limit 1", [a.id]);
      await notFound(DeliveryRepository.use((r) => r.message(scope, message!.envelope_id)));
    },
    find: () => notFound(DeliveryRepository.use((r) => r.find(scope, target.delivery))),
    retry: () => notFound(DeliveryRepository.use((r) => r.retry(scope, target.delivery))),
    retryMessage: async () => {
      const [message] = await rows<{ id: string }>("select message_id as id from webhook_deliveries where id = ?", [target.delivery]);
      await notFound(DeliveryRepository.use((r) => r.retryMessage(scope, Number(message!.id))));
    },
    retryFailed: () => notFound(DeliveryRepository.use((r) => r.retryFailed(scope, target.endpoint))),
  },
  DeveloperSessions: {
    createLink: () => run(DeveloperSessions.use((r) => r.createLink(scope, "cli"))),
    // A's session named under B's scope: not B's to end.
    signOut: () => notFound(DeveloperSessions.use((r) => r.signOut({ ...sessionOfA, scope }))),
    // A's live session is neither listed nor ended for B (its device hint and last seen stay A's).
    list: async () => expectOnlyB("developer_sessions", (await run(DeveloperSessions.use((r) => r.list(scope)))).map((s) => s.id)),
    end: () => notFound(DeveloperSessions.use((r) => r.end(scope, sessionOfA.sessionId))),
    endAll: async () => {
      const ended = await run(DeveloperSessions.use((r) => r.endAll(scope)));
      await expectOnlyB("developer_sessions", ended);
    },
  },
  RequestLog: {
    list: async () => expectOnlyB("api_requests", (await run(RequestLog.use((r) => r.list(scope, {}, { limit: 100, after: undefined })))).data.map((e) => e.id)),
    // A record naming A's organization with B's key is not written: a row is its key's organization's.
    append: async () => expect(await run(RequestLog.use((r) => r.append([{
      organization_id: a.id, api_key_id: b.readKeyId, at: new Date().toISOString(), method: "GET", route: "/v1/me", status: 200,
      duration_ms: 1, request_id: "req_crossed", error: null,
    }])))).toBe(0),
  },
  AuditLog: {
    record: () => notFound(AuditLog.use((r) => r.record({ ...sessionOfA, scope }, "api_key.revoked", "api_key 1"))),
    list: async () => expectOnlyB("audit_log", (await run(AuditLog.use((r) => r.list(scope, 100)))).map((e) => e.id)),
    page: async () => {
      const page = await run(AuditLog.use((r) => r.page(scope, {}, { limit: 500, after: undefined })));
      await expectOnlyB("audit_log", page.data.map((e) => e.id));
      // No entry of B's names A's session or its device.
      expect(page.data.filter((e) => e.session_id === sessionOfA.sessionId || e.device_hint === "A's laptop")).toEqual([]);
    },
    // B's actions only: A's own action is not offered as a choice.
    actions: async () => expect(await run(AuditLog.use((r) => r.actions(scope)))).toEqual(["api_key.created"]),
  },
  Sandboxes: {
    // B's standing names B (live, no sandbox yet), never A.
    standing: async () => expect(await run(Sandboxes.use((s) => s.standing(scope)))).toEqual({ kind: "live", name: "Organization B", sandbox: null }),
    // B's sandbox is a new organization of its own, linked to B: none of A's rows change.
    open: async () => {
      const opened = await run(Sandboxes.use((s) => s.open(scope, seedDemo)));
      expect([a.id, b.id]).not.toContain(opened.id);
      expect(await rows("select sandbox_of from organizations where id = ?", [opened.id])).toEqual([{ sandbox_of: String(b.id) }]);
    },
    // From B's scope, only B's own sandbox.
    linkedScope: async () => {
      const linked = await run(Sandboxes.use((s) => s.linkedScope(scope)));
      expect(await rows("select sandbox_of from organizations where id = ?", [linked.organizationId])).toEqual([{ sandbox_of: String(b.id) }]);
    },
    // B is live: its data is not reset, and nothing else's is either.
    reset: () => expect(run(Sandboxes.use((s) => s.reset(scope, seedDemo)))).rejects.toMatchObject({ _tag: "InvalidTransition" }),
    target: async () => expect([...(await idsOf("invoices", b.id))]).toContain(await run(Sandboxes.use((s) => s.target(scope, "draft_invoice")))),
  },
  // B's scope, even one naming A's key (as a forged scope would), reaches nothing of A's listener.
  LocalListeners: {
    open: async () => {
      const opened = await run(LocalListeners.use((l) => l.open({ ...scope, apiKeyId: b.writeKeyId }, { forwardTo: "http://localhost:5000/b", eventTypes: [] }, 60_000, 5)));
      await expectOnlyB("webhook_endpoints", [opened.id]);
    },
    renew: async () => expect(await run(LocalListeners.use((l) => l.renew({ ...scope, apiKeyId: a.writeKeyId }, listenerOfA, 60_000)))).toBe("replaced"),
    close: () => run(LocalListeners.use((l) => l.close({ ...scope, apiKeyId: a.writeKeyId }, listenerOfA))),
    claim: async () => expect(await run(LocalListeners.use((l) => l.claim({ ...scope, apiKeyId: a.writeKeyId }, listenerOfA, 60_000)))).toEqual([]),
    record: () => expect(run(LocalListeners.use((l) => l.record({ ...scope, apiKeyId: a.writeKeyId }, {
      deliveryId: leasedByA.id, leaseToken: leasedByA.leaseToken, statusCode: 200, durationMs: 1, error: undefined, responseBody: undefined,
      outcome: "succeeded",
    })))).rejects.toMatchObject({ _tag: "InvalidTransition" }),
  },
  AlertRecipientStore: {
    lockForAdding: async () => expect(await run(inOneTransaction(AlertRecipientStore.use((r) => r.lockForAdding(scope))))).toBe(1),
    add: () => run(inOneTransaction(AlertRecipientStore.use((r) => r.add(scope, "dev@org-a.example")))),
    list: async () => expectOnlyB("alert_recipients", (await run(AlertRecipientStore.use((r) => r.list(scope)))).map((row) => row.id)),
    remove: () => notFound(AlertRecipientStore.use((r) => r.remove(scope, target.alertRecipient))),
    // Takes a link's token, not a scope: a token nobody was mailed confirms nothing.
    confirm: async () => expect(await run(AlertRecipientStore.use((r) => r.confirm("x".repeat(43))))).toBeUndefined(),
  },
  BusinessRecords: {
    lockInvoiceStatus: () => notFound(inOneTransaction(BusinessRecords.use((r) => r.lockInvoiceStatus(scope, target.draftInvoice)))),
    invoice: () => notFound(BusinessRecords.use((r) => r.invoice(scope, target.draftInvoice))),
    setInvoiceStatus: () => run(BusinessRecords.use((r) => r.setInvoiceStatus(scope, target.draftInvoice, "paid", 1))),
    lockProposalStatus: () => notFound(inOneTransaction(BusinessRecords.use((r) => r.lockProposalStatus(scope, target.proposal)))),
    markProposalApproved: () => notFound(BusinessRecords.use((r) => r.markProposalApproved(scope, target.proposal))),
  },
});

/** Writes with a scope that are no store of the platform: the application's demo data and the bulk seeds (`@platter/seeds`). */
const seeds = (scope: OrgScope) => ({
  demo: () => run(DemoData.seed(scope)),
  bulk: () => run(Seeding.bulk(scope, { events: 20, clients: 10, invoices: 5 })),
  deliveryLog: () => run(Seeding.deliveryLog(scope, { deliveries: 40, endpoints: 2 })),
});

/** Every id must belong to B, and B must have at least one row there (a list that read nothing proves nothing). */
const expectOnlyB = async (table: string, ids: ReadonlyArray<number>) => {
  const own = await idsOf(table, b.id);
  expect(ids.length).toBeGreaterThan(0);
  expect(ids.filter((id) => !own.has(id))).toEqual([]);
};

/**
 * The stores the platform's layers build that take no organization's scope, and why. Every other
 * store the layers build must have its cases above: a new store, or a new method, fails the test
 * below until it has them.
 */
const UNSCOPED: Readonly<Record<string, string>> = {
  Database: "the pool itself: the stores reach organizations' rows only through OrgSql",
  DeliveryQueue: "the dispatcher's queue, across organizations by design (never in a request process)",
  Housekeeping: "retention and pruning across organizations",
  HistoryPartitions: "time partitions of history, made and dropped whole across organizations (history-retention.test.ts)",
  ProcessInstances: "processes, not organizations",
  Operator: "makes a scope from an id: the operator's step (its own case is the last test)",
  StoredSecretsResealing: "re-seals every organization's stored secrets with the current key, each for its own row (secrets-at-rest.test.ts)",
};

/** Methods that take a token rather than a scope: authentication, opening a session with a link, and looking a link up before that. */
const SCOPE_MAKERS = new Set(["authenticate", "authenticateHash", "signIn", "checkLink"]);

describe("organization isolation", () => {
  it("knows every organization-owned table", async () => {
    const owned = await rows<{ table_name: string }>(
      // A partitioned table once, not each of its partitions.
      `select c.table_name from information_schema.columns c join pg_class t on t.relname = c.table_name and t.relnamespace = 'public'::regnamespace
       where c.table_schema = 'public' and c.column_name = 'organization_id' and not t.relispartition
       order by c.table_name`,
    );
    expect(["organizations", ...owned.map((row) => row.table_name)].sort()).toEqual(Object.keys(ORGANIZATION_TABLES).sort());
  });

  it("has rows of A in every organization-owned table before the run", async () => {
    const tables = await snapshot(a.id);
    expect(Object.entries(tables).filter(([, rows]) => rows.length === 0).map(([table]) => table)).toEqual([]);
  });

  it("has a case for every method of every scoped store the platform's layers build (authentication and sign-in make scopes rather than taking one)", async () => {
    const all = cases(b.scope);
    const context = await db.run(Effect.context<Persistence>());
    // Our stores (Effect keeps its own bookkeeping in the context too).
    const stores = [...context.mapUnsafe.entries()]
      .filter(([key]) => key.startsWith("platter/persistence/"))
      .map(([key, service]) => [key.slice("platter/persistence/".length), service as Record<string, unknown>] as const);
    expect(Object.keys(UNSCOPED).filter((name) => !stores.some(([store]) => store === name))).toEqual([]);
    const scoped = stores.filter(([name]) => !(name in UNSCOPED));
    expect(scoped.map(([name]) => name).sort()).toEqual(Object.keys(all).sort());
    for (const [name, service] of scoped) {
      const methods = Object.keys(service).filter((key) => !SCOPE_MAKERS.has(key)).sort();
      expect([name, ...methods]).toEqual([name, ...Object.keys(all[name as keyof typeof all]).sort()]);
    }
  });

  it("a scope of B never reads, counts or changes a row of A", async () => {
    const before = await snapshot(a.id);
    for (const service of [...Object.values(cases(b.scope)), seeds(b.scope)]) {
      for (const method of Object.values(service)) await method();
    }
    expect(await snapshot(a.id)).toEqual(before);
  });

  it("the operator's scope of a record is its owner's", async () => {
    const scope = await run(Operator.use((o) => o.scopeOfRecord("invoices", target.invoice)));
    expect(scope.organizationId).toBe(a.id);
    await notFound(Operator.use((o) => o.scopeOfRecord("invoices", 987_654_321)));
  });
});
