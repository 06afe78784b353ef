import {
  type Event, type EventDetail, EventRepository, eventListing, fromMinorUnits, InvalidInput, type OrgScope,
  toMinorUnits, type EventCreate, currencyExponent, type IdempotencyRequest,
} from "@platter/domain";
import { Effect, Layer } from "effect";
import type { Orm } from "../database.ts";
import { EventEntity } from "../entities/index.ts";
import { isoTimestamp, readKeysetPage, scopedSql } from "../scoped-sql.ts";
import { createOnce } from "./idempotent-create.ts";
import { recordOutboxEvent } from "./outbox.ts";

/** Events: keyset list newest first, detail with dishes, creation with its `event.created` event. */

export interface EventRow {
  id: string;
  name: string;
  event_date: string | null;
  guests: number | null;
  price_per_head_minor: string | null;
  event_type: Event["event_type"];
  status: Event["status"];
  client_id: string | null;
  created_at: string;
}

interface EventDetailRow extends EventRow {
  dishes: EventDetail["dishes"];
}

const COLUMNS = `e.id, e.name, e.event_date::text as event_date, e.guests, e.price_per_head_minor, e.event_type,
  e.status, e.client_id, ${isoTimestamp("e.created_at")} as created_at`;
export const EVENT_SELECT = `select ${COLUMNS} from events e where e.organization_id = ?`;
const SELECT_DETAIL = `select ${COLUMNS},
    coalesce((select json_agg(json_build_object('id', d.id, 'recipe_id', d.recipe_id, 'recipe_name', r.name,
        'course', d.course, 'servings', d.servings) order by d.position, d.id)
      from dishes d join recipes r on r.id = d.recipe_id and r.organization_id = d.organization_id
      where d.event_id = e.id and d.organization_id = e.organization_id), '[]') as dishes
  from events e where e.organization_id = ? and e.id = ?`;

/** Maps a stored event to its API shape; amounts are shown in the organization's currency. */
export const toEvent = (row: EventRow, currency: string): Event => ({
  id: Number(row.id),
  name: row.name,
  event_date: row.event_date,
  guests: row.guests,
  price_per_head: row.price_per_head_minor === null ? null : fromMinorUnits(Number(row.price_per_head_minor), currency),
  currency,
  event_type: row.event_type,
  status: row.status,
  client_id: row.client_id === null ? null : Number(row.client_id),
  created_at: row.created_at,
});

const pricePerHeadMinor = (input: EventCreate, currency: string): Effect.Effect<number | null, InvalidInput> => {
  if (input.price_per_head === undefined || input.price_per_head === null) return Effect.succeed(null);
  const minor = toMinorUnits(input.price_per_head, currency);
  return minor === undefined
    ? Effect.fail(new InvalidInput({ message: `price_per_head has more decimal places than ${currency} allows (${currencyExponent(currency)})` }))
    : Effect.succeed(minor);
};

const insertEvent = (orm: Orm, scope: OrgScope, input: EventCreate, priceMinor: number | null, idempotency?: IdempotencyRequest) =>
  createOnce(orm, scope, idempotency, async (em) => {
    const id = Number(
      await em.insert(EventEntity, {
        organizationId: scope.organizationId,
        clientId: null,
        name: input.name,
        eventDate: input.event_date ?? null,
        guests: input.guests ?? null,
        pricePerHeadMinor: priceMinor,
        eventType: input.event_type ?? null,
        status: "inquiry",
      }),
    );
    const [row] = await em.execute<EventRow[]>(`${EVENT_SELECT} and e.id = ?`, [scope.organizationId, id]);
    await recordOutboxEvent(em, scope, { type: "event.created", data: toEvent(row!, scope.currency) });
    return id;
  });

export const makeEventRepository = (orm: Orm): EventRepository["Service"] => ({
  list: (scope, page) =>
    readKeysetPage(
      scopedSql(orm, scope),
      eventListing,
      { select: EVENT_SELECT, keyColumns: ["e.created_at", "e.id"], keyCasts: ["timestamptz", "bigint"] },
      page,
      (row: EventRow) => toEvent(row, scope.currency),
    ),
  get: (scope, id) =>
    Effect.map(scopedSql(orm, scope).one<EventDetailRow>(SELECT_DETAIL, [id]), (row) => ({
      ...toEvent(row, scope.currency),
      dishes: row.dishes,
    })),
  create: (scope, input, idempotency) =>
    Effect.flatMap(pricePerHeadMinor(input, scope.currency), (priceMinor) =>
      insertEvent(orm, scope, input, priceMinor, idempotency),
    ),
});

export const EventRepositoryLive = (orm: Orm) => Layer.succeed(EventRepository, makeEventRepository(orm));
