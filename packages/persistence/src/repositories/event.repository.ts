import {
  type Event, type EventCreate, type EventDetail, eventListing, fromMinorUnits, type ListPage, NotFound, type OrgScope,
  type PageRequest, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { EventEntity } from "../entities/index.ts";
import { isoTimestamp, readKeysetPage } from "../keyset-page.ts";
import { type OrgSql, orgSql, sql } from "../org-sql.ts";

/**
 * Events: keyset list newest first, detail with dishes, and the rows of a new one (the API's create
 * with its `event.created` message is the application's `Events.create`).
 */

/** An event's columns (`COLUMNS`), in their order. */
type EventRow = readonly [
  id: string,
  name: string,
  event_date: string | null,
  guests: number | null,
  price_per_head_minor: string | null,
  event_type: Event["event_type"],
  status: Event["status"],
  client_id: string | null,
  created_at: string,
];

/** `DETAIL_COLUMNS`: the event's columns, then its dishes. */
type EventDetailRow = readonly [...EventRow, dishes: EventDetail["dishes"]];

const COLUMNS = `e.id, e.name, e.event_date::text as event_date, e.guests, e.price_per_head_minor, e.event_type,
  e.status, e.client_id, ${isoTimestamp("e.created_at")} as created_at`;
// Dishes come with the event (one round trip), joined within the event's organization.
const DETAIL_COLUMNS = `${COLUMNS},
    coalesce((select json_agg(json_build_object('id', d.id, 'recipe_id', d.recipe_id, 'recipe_name', r.name,
        'course', d.course, 'servings', d.servings) order by d.position, d.id)
      from dishes d join recipes r on r.id = d.recipe_id and r.organization_id = d.organization_id
      where d.event_id = e.id and d.organization_id = e.organization_id), '[]') as dishes`;

/** Maps a stored event (its column values, by position) to its API shape; amounts are shown in the organization's currency. */
const toEvent = (row: EventRow, currency: string): Event => ({
  id: Number(row[0]),
  name: row[1],
  event_date: row[2],
  guests: row[3],
  price_per_head: row[4] === null ? null : fromMinorUnits(Number(row[4]), currency),
  currency,
  event_type: row[5],
  status: row[6],
  client_id: row[7] === null ? null : Number(row[7]),
  created_at: row[8],
});

/** Reads one event of the scope as the API shows it (inside a create's transaction). */
export const readEvent = (org: OrgSql, id: number): Effect.Effect<Event, NotFound | DatabaseUnavailable> =>
  Effect.map(org.oneValues<EventRow>({ columns: COLUMNS, from: "events", as: "e", where: sql`e.id = ${id}` }), (row) =>
    toEvent(row, org.scope.currency),
  );

/** A new event's columns (it starts in `inquiry` status), its amounts in minor units. */
export interface NewEvent {
  readonly clientId: number | null;
  readonly name: string;
  readonly eventDate: string | null;
  readonly guests: number | null;
  readonly pricePerHeadMinor: number | null;
  readonly eventType: EventCreate["event_type"] | null;
}

export class EventRepository extends Context.Service<
  EventRepository,
  {
    readonly list: (scope: OrgScope, page: PageRequest<readonly [string, number]>) => Effect.Effect<ListPage<Event>, DatabaseUnavailable>;
    readonly get: (scope: OrgScope, id: number) => Effect.Effect<EventDetail, NotFound | DatabaseUnavailable>;
    /** Inserts a new event in `inquiry` status and returns its id; in the caller's transaction when there is one (`inOneTransaction`). */
    readonly insert: (scope: OrgScope, event: NewEvent) => Effect.Effect<number, DatabaseUnavailable>;
    /** One event as the API shows it (a create reads it for its message). */
    readonly read: (scope: OrgScope, id: number) => Effect.Effect<Event, NotFound | DatabaseUnavailable>;
  }
>()("platter/persistence/EventRepository") {
  static readonly layer = Layer.effect(
    EventRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      return EventRepository.of({
        list: (scope: OrgScope, page: PageRequest<readonly [string, number]>) =>
          readKeysetPage(
            orgSql(database, scope),
            eventListing,
            { columns: COLUMNS, from: "events", as: "e", keyColumns: ["e.created_at", "e.id"], keyCasts: ["timestamptz", "bigint"] },
            page,
            (row: EventRow) => toEvent(row, scope.currency),
            "values",
          ),
        get: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const row = yield* orgSql(database, scope).oneValues<EventDetailRow>({
            columns: DETAIL_COLUMNS,
            from: "events",
            as: "e",
            where: sql`e.id = ${id}`,
          });
          return { ...toEvent(row as unknown as EventRow, scope.currency), dishes: row[9] };
        }),
        insert: (scope: OrgScope, event: NewEvent) =>
          orgSql(database, scope).insert(EventEntity, {
            client: event.clientId,
            name: event.name,
            eventDate: event.eventDate,
            guests: event.guests,
            pricePerHeadMinor: event.pricePerHeadMinor,
            eventType: event.eventType,
            status: "inquiry",
          }),
        read: (scope: OrgScope, id: number) => readEvent(orgSql(database, scope), id),
      });
    }),
  );
}
