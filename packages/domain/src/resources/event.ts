import { Schema } from "effect";
import { CalendarDate, optionalField, requiredText } from "../input.ts";
import { CursorId, CursorTimestamp } from "../cursor-keys.ts";
import type { Listing } from "../pagination.ts";
import { ClientCreate } from "./client.ts";

/** Event: a catered occasion with its dishes. */

export const EVENT_STATUSES = ["inquiry", "proposed", "confirmed", "completed", "cancelled"] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export const EVENT_TYPES = [
  "wedding", "corporate", "birthday", "private_party", "conference", "funeral", "festival", "other",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const COURSES = ["canape", "starter", "main", "side", "dessert", "drink"] as const;

export const Dish = Schema.Struct({
  id: Schema.Int,
  recipe_id: Schema.Int,
  recipe_name: Schema.String,
  course: Schema.Literals(COURSES),
  servings: Schema.Int,
});
export type Dish = typeof Dish.Type;

export const Event = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  event_date: Schema.NullOr(Schema.String),
  guests: Schema.NullOr(Schema.Int),
  price_per_head: Schema.NullOr(Schema.Finite),
  currency: Schema.String,
  event_type: Schema.NullOr(Schema.Literals(EVENT_TYPES)),
  status: Schema.Literals(EVENT_STATUSES),
  client_id: Schema.NullOr(Schema.Int),
  created_at: Schema.String,
});
export type Event = typeof Event.Type;

export const EventDetail = Schema.Struct({ ...Event.fields, dishes: Schema.Array(Dish) });
export type EventDetail = typeof EventDetail.Type;

export const MAX_GUESTS = 100_000;
/** In major units; keeps every amount within exact integer arithmetic in any currency we accept. */
export const MAX_PRICE_PER_HEAD = 1_000_000_000;
const EVENT_TYPE_MESSAGE = `event_type must be one of ${EVENT_TYPES.join(", ")}`;

/** Body of `POST /events`. Only `name` is required; `price_per_head` is in the organization's currency. */
export const EventCreate = Schema.Struct({
  name: requiredText("name", 200),
  event_date: optionalField(CalendarDate("event_date"), "event_date must be a calendar date written YYYY-MM-DD"),
  guests: optionalField(
    Schema.Int.annotate({ message: "guests must be an integer" }).check(
      Schema.isBetween({ minimum: 1, maximum: MAX_GUESTS }, { message: `guests must be between 1 and ${MAX_GUESTS}` }),
    ),
    "guests must be an integer",
  ),
  price_per_head: optionalField(
    Schema.Finite.annotate({ message: "price_per_head must be a number" }).check(
      Schema.isGreaterThanOrEqualTo(0, { message: "price_per_head must not be negative" }),
      Schema.isLessThanOrEqualTo(MAX_PRICE_PER_HEAD, { message: `price_per_head must be at most ${MAX_PRICE_PER_HEAD}` }),
    ),
    "price_per_head must be a number",
  ),
  event_type: optionalField(
    Schema.Literals(EVENT_TYPES).annotate({ message: EVENT_TYPE_MESSAGE }),
    EVENT_TYPE_MESSAGE,
  ),
});
export type EventCreate = typeof EventCreate.Type;

/** Newest first: `created_at` then `id`, both descending. */
export const eventListing: Listing<Event, readonly [string, number]> = {
  endpoint: "events",
  direction: "desc",
  cursorKey: Schema.Tuple([CursorTimestamp, CursorId]),
  keyOf: (event) => [event.created_at, event.id],
};

/** A new online catering request: who asked, and what they know so far. Becomes an event in `inquiry`. */
export const InquiryReceive = Schema.Struct({
  name: requiredText("name", 200),
  email: ClientCreate.fields.email,
  phone: ClientCreate.fields.phone,
  event_date: EventCreate.fields.event_date,
  guests: EventCreate.fields.guests,
});
export type InquiryReceive = typeof InquiryReceive.Type;
