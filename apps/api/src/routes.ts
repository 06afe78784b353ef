import Router from "@koa/router";
import {
  ClientCreate, clientListing, decodeInput, EventCreate, eventListing, invoiceListing, NotFound, parsePageRequest,
  parseRecordId, recipeListing, type Listing, type OrgScope, type PageRequest, type SortKey, type Created,
  type IdempotencyRequest, parseIdempotencyKey, requestFingerprint, type ListPage, apiKeyActor,
} from "@platter/domain";
import { Clients, Events } from "@platter/application";
import {
  ApiKeyRepository, ClientRepository, EventRepository, InvoiceRepository, onReplica, OrganizationRepository, type RequestStorage,
  RecipeRepository,
} from "@platter/persistence";
import { Effect, Result } from "effect";
import type { Context } from "koa";
import { authentication, requireWriteAccess, scopeOf } from "./middleware/authenticate.ts";
import { type KeyRateLimits, readJsonBody } from "@platter/ops";
import type { BudgetedRunner } from "./budgeted-runner.ts";

/**
 * The ten endpoints of v1. Each handler decodes its input, makes one repository call with the
 * caller's scope (a create: the application's use case, as the key), and returns what it mapped. Routing happens before authentication:
 * only a route that exists asks for a key.
 */

type Program<A> = (scope: OrgScope) => Effect.Effect<A, unknown, RequestStorage>;

const pageOf = <Row, Key extends SortKey>(ctx: Context, listing: Listing<Row, Key>): PageRequest<Key> => {
  const page = parsePageRequest(listing, ctx.query as Record<string, string | string[]>);
  if (Result.isFailure(page)) throw page.failure;
  return page.success;
};

const idOf = (ctx: Context): number => {
  const id = parseRecordId(String(ctx.params["id"]));
  if (id === undefined) throw new NotFound();
  return id;
};

/** A create's decoded input, and its idempotency key and fingerprint when the caller sent a key. */
const createRequestOf = async <A>(
  ctx: Context,
  schema: Parameters<typeof decodeInput<A>>[0],
): Promise<{ input: A; idempotency: IdempotencyRequest | undefined }> => {
  const body = await readJsonBody(ctx);
  const input = decodeInput(schema, body);
  if (Result.isFailure(input)) throw input.failure;
  // An empty header is a mistake (an unset variable in a script), not "no key": refuse it.
  const header = ctx.req.headers["idempotency-key"];
  const key = parseIdempotencyKey(Array.isArray(header) ? header.join(",") : header);
  if (Result.isFailure(key)) throw key.failure;
  const idempotency = key.success === undefined ? undefined : { key: key.success, fingerprint: requestFingerprint(ctx.path, body) };
  return { input: input.success, idempotency };
};

/** The program of a list route: the page its query asks for (bad input throws, after authentication), for the caller. */
const listOf =
  <Row, Key extends SortKey>(listing: Listing<Row, Key>, list: (scope: OrgScope, page: PageRequest<Key>) => ReturnType<Program<ListPage<Row>>>) =>
  (ctx: Context): Program<ListPage<Row>> => {
    const page = pageOf(ctx, listing);
    return (scope) => list(scope, page);
  };

/** The program of a record route: the record its path names (an id that cannot be one is `NotFound`), for the caller. */
const recordOf =
  <A>(get: (scope: OrgScope, id: number) => ReturnType<Program<A>>) =>
  (ctx: Context): Program<A> => {
    const id = idOf(ctx);
    return (scope) => get(scope, id);
  };

const listEvents = listOf(eventListing, (scope, page) => EventRepository.use((r) => r.list(scope, page)));
const eventById = recordOf((scope, id) => EventRepository.use((r) => r.get(scope, id)));
const listRecipes = listOf(recipeListing, (scope, page) => RecipeRepository.use((r) => r.list(scope, page)));
const recipeById = recordOf((scope, id) => RecipeRepository.use((r) => r.get(scope, id)));
const listClients = listOf(clientListing, (scope, page) => ClientRepository.use((r) => r.list(scope, page)));
const listInvoices = listOf(invoiceListing, (scope, page) => InvoiceRepository.use((r) => r.list(scope, page)));
const invoiceById = recordOf((scope, id) => InvoiceRepository.use((r) => r.get(scope, id)));
const currentOrganization = (): Program<unknown> => (scope) => OrganizationRepository.use((r) => r.current(scope));

/** Reads on replicas (`DATABASE_REPLICA_URLS` set): how long after a key's write its reads stay on the primary. */
export interface ReplicaReadRouting {
  readonly readYourWritesMs: number;
}

/**
 * The v1 router: each route authenticates, then runs its one program within the request's
 * database budget. With `replicas`, a GET reads from a replica unless its key wrote within the
 * read-your-writes window, and a create first notes that its key writes.
 */
export const createRouter = (
  runner: BudgetedRunner, limits: KeyRateLimits, clientAddress: (ctx: Context) => string, replicas?: ReplicaReadRouting,
): Router => {
  const router = new Router({ prefix: "/v1", strict: true, sensitive: true });
  const { run: authenticated, middleware: auth } = authentication(runner, limits, clientAddress);
  /**
   * GETs only (their programs change nothing): authenticates, then runs the program `read(ctx)`
   * makes for the caller's scope (it may throw on bad input, after authentication) in the same
   * fiber as the key lookup; on a replica unless the key wrote within the read-your-writes window.
   */
  const respond = async <A>(ctx: Context, read: (ctx: Context) => Program<A>): Promise<void> => {
    ctx.body = await authenticated(ctx, (key) => {
      const program = read(ctx)(key.scope);
      return replicas === undefined || (key.msSinceWrite !== undefined && key.msSinceWrite < replicas.readYourWritesMs)
        ? program
        : onReplica(program);
    });
    ctx.status = 200;
  };
  /** 201 `{id}` with a Location; a replay of an idempotent create says so in `Idempotent-Replayed`. */
  const created = async (ctx: Context, resource: string, program: Program<Created>) => {
    const scope = scopeOf(ctx);
    const create = program(scope);
    const { id, replayed } = await runner.run(
      ctx,
      replicas === undefined ? create : Effect.andThen(ApiKeyRepository.use((keys) => keys.recordWrite(scope)), create),
    );
    ctx.status = 201;
    ctx.body = { id };
    ctx.set("location", `/v1/${resource}/${id}`);
    if (replayed) ctx.set("idempotent-replayed", "true");
  };

  router.get("/me", (ctx) => respond(ctx, currentOrganization));

  router.get("/events", (ctx) => respond(ctx, listEvents));
  router.get("/events/:id", (ctx) => respond(ctx, eventById));
  router.post("/events", auth, requireWriteAccess, async (ctx) => {
    const { input, idempotency } = await createRequestOf(ctx, EventCreate);
    await created(ctx, "events", (scope) => Events.create(apiKeyActor(scope), input, idempotency));
  });

  router.get("/recipes", (ctx) => respond(ctx, listRecipes));
  router.get("/recipes/:id", (ctx) => respond(ctx, recipeById));

  router.get("/clients", (ctx) => respond(ctx, listClients));
  router.post("/clients", auth, requireWriteAccess, async (ctx) => {
    const { input, idempotency } = await createRequestOf(ctx, ClientCreate);
    await created(ctx, "clients", (scope) => Clients.create(apiKeyActor(scope), input, idempotency));
  });

  router.get("/invoices", (ctx) => respond(ctx, listInvoices));
  router.get("/invoices/:id", (ctx) => respond(ctx, invoiceById));

  return router;
};
