import { Schema } from "effect";
import { CursorId, CursorName } from "../cursor-keys.ts";
import { noNul, optionalField, optionalText, requiredText } from "../input.ts";
import type { Listing } from "../pagination.ts";

/** Client: a person or company the business caters for. */

export const Client = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  company: Schema.NullOr(Schema.String),
  created_at: Schema.String,
});
export type Client = typeof Client.Type;

// Deliberately loose: one @, no spaces, a dot in the domain. Deliverability is the mail server's job.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[0-9 ().-]{3,40}$/;

/** Body of `POST /clients`. Only `name` is required. */
export const ClientCreate = Schema.Struct({
  name: requiredText("name", 200),
  email: optionalField(
    Schema.String.check(
      Schema.isMaxLength(254, { message: "email must be at most 254 characters" }),
      Schema.isPattern(EMAIL, { message: "email must be an email address" }),
      noNul("email"),
    ),
    "email must be a string",
  ),
  phone: optionalField(
    Schema.String.check(
      Schema.isPattern(PHONE, { message: "phone must be a phone number (digits, spaces, + ( ) . -)" }),
    ),
    "phone must be a string",
  ),
  company: optionalText("company", 200),
});
export type ClientCreate = typeof ClientCreate.Type;

/** By name, ties by id. */
export const clientListing: Listing<Client, readonly [string, number]> = {
  endpoint: "clients",
  direction: "asc",
  cursorKey: Schema.Tuple([CursorName, CursorId]),
  keyOf: (client) => [client.name, client.id],
};
