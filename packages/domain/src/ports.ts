import { Context, type Effect } from "effect";
import type { IdempotencyKeyInProgress, IdempotencyKeyReused, InvalidInput, NotFound, Unauthenticated } from "./errors.ts";
import type { IdempotencyRequest } from "./idempotency.ts";
import type { ListPage, PageRequest } from "./pagination.ts";
import type { Client, ClientCreate } from "./resources/client.ts";
import type { Event, EventCreate, EventDetail } from "./resources/event.ts";
import type { Invoice, InvoiceDetail } from "./resources/invoice.ts";
import type { Organization } from "./resources/organization.ts";
import type { Recipe, RecipeDetail } from "./resources/recipe.ts";
import type { OrgScope } from "./scope.ts";

/**
 * Ports: what the domain needs from storage. Every organization-scoped method takes the caller's
 * scope first; implementations confine every query to `scope.organizationId`.
 * Unexpected storage failures are defects, not listed errors.
 */

type TimeKey = PageRequest<readonly [string, number]>;
type NameKey = PageRequest<readonly [string, number]>;

/** The id of a newly created record; `replayed` when an earlier request with the same Idempotency-Key created it. */
export interface Created {
  readonly id: number;
  readonly replayed: boolean;
}

/** Why an idempotent create did not run. */
export type IdempotencyError = IdempotencyKeyReused | IdempotencyKeyInProgress;

export class ApiKeyRepository extends Context.Service<
  ApiKeyRepository,
  { readonly authenticate: (secret: string) => Effect.Effect<OrgScope, Unauthenticated> }
>()("platter/ApiKeyRepository") {}

export class OrganizationRepository extends Context.Service<
  OrganizationRepository,
  { readonly current: (scope: OrgScope) => Effect.Effect<Organization, NotFound> }
>()("platter/OrganizationRepository") {}

export class EventRepository extends Context.Service<
  EventRepository,
  {
    readonly list: (scope: OrgScope, page: TimeKey) => Effect.Effect<ListPage<Event>>;
    readonly get: (scope: OrgScope, id: number) => Effect.Effect<EventDetail, NotFound>;
    readonly create: (
      scope: OrgScope,
      input: EventCreate,
      idempotency?: IdempotencyRequest,
    ) => Effect.Effect<Created, InvalidInput | IdempotencyError>;
  }
>()("platter/EventRepository") {}

export class RecipeRepository extends Context.Service<
  RecipeRepository,
  {
    readonly list: (scope: OrgScope, page: NameKey) => Effect.Effect<ListPage<Recipe>>;
    readonly get: (scope: OrgScope, id: number) => Effect.Effect<RecipeDetail, NotFound>;
  }
>()("platter/RecipeRepository") {}

export class ClientRepository extends Context.Service<
  ClientRepository,
  {
    readonly list: (scope: OrgScope, page: NameKey) => Effect.Effect<ListPage<Client>>;
    readonly create: (
      scope: OrgScope,
      input: ClientCreate,
      idempotency?: IdempotencyRequest,
    ) => Effect.Effect<Created, IdempotencyError>;
  }
>()("platter/ClientRepository") {}

export class InvoiceRepository extends Context.Service<
  InvoiceRepository,
  {
    readonly list: (scope: OrgScope, page: TimeKey) => Effect.Effect<ListPage<Invoice>>;
    readonly get: (scope: OrgScope, id: number) => Effect.Effect<InvoiceDetail, NotFound>;
  }
>()("platter/InvoiceRepository") {}
