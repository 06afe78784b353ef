import { Schema } from "effect";

/** Organization: the catering business a key belongs to (`GET /me`). */
export const Organization = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  /** ISO 4217 code; every amount of the organization is in this currency. */
  currency: Schema.String,
  created_at: Schema.String,
});
export type Organization = typeof Organization.Type;
