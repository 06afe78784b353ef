import { Result, Schema, SchemaIssue } from "effect";
import { InvalidInput } from "./errors.ts";
import { ECHOED_INPUT_MAX_CHARACTERS, ERROR_TEXT_MAX_CHARACTERS, storableText } from "./storable-text.ts";

/** Input: decoding untrusted request bodies into create inputs, with texts a caller can act on. */

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1();

/**
 * The text of a decode's first issue. Field names and values come from the caller (an unknown
 * field's name, a value a default message quotes), so the name is cut to
 * `ECHOED_INPUT_MAX_CHARACTERS` and the whole text is storable and at most `ERROR_TEXT_MAX_CHARACTERS`.
 */
const describe = (issue: SchemaIssue.Issue): string => {
  const first = formatIssue(issue).issues[0];
  if (first === undefined) return "invalid request body";
  const path = (first.path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment));
  if (path.length === 0) return "request body must be a JSON object";
  const field = path.join(".");
  const echoed = storableText(field, ECHOED_INPUT_MAX_CHARACTERS);
  if (first.message === "Expected no excess property") return `unknown field: ${echoed}`;
  return storableText(first.message.startsWith(field) ? first.message : `${echoed}: ${first.message}`, ERROR_TEXT_MAX_CHARACTERS);
};

/**
 * Decodes a parsed JSON body with `schema`, refusing unknown fields. The first problem becomes
 * the error text, e.g. `name is required` or `unknown field: colour`.
 */
export const decodeInput = <A>(schema: Schema.Codec<A, unknown>, body: unknown): Result.Result<A, InvalidInput> => {
  const decoded = Schema.decodeUnknownResult(schema)(body, { onExcessProperty: "error", errors: "first" });
  return Result.isSuccess(decoded)
    ? Result.succeed(decoded.success)
    : Result.fail(new InvalidInput({ message: describe(decoded.failure.issue) }));
};

/** PostgreSQL text cannot hold NUL; refuse it up front rather than fail in the database. */
export const noNul = (field: string) =>
  Schema.makeFilter((s: string) => !s.includes("\u0000"), { message: `${field} must not contain NUL characters` });

/** At most `max` characters, counted as Unicode code points (an emoji is one), as JSON Schema's maxLength counts. */
const maxCharacters = (field: string, max: number) =>
  Schema.isMaxCodePoints(max, { message: `${field} must be at most ${max} characters` });

/** A lone surrogate cannot be stored as UTF-8: refuse it rather than store a replacement character. */
const wellFormed = (field: string) =>
  Schema.makeFilter((s: string) => s.isWellFormed(), { message: `${field} must be valid Unicode text` });

/** A required text field: a string with at least one non-blank character, at most `max` long. */
export const requiredText = (field: string, max: number) =>
  Schema.String.annotate({ message: `${field} must be a string` })
    .check(
      Schema.makeFilter((s: string) => s.trim().length > 0, { message: `${field} must not be empty` }),
      maxCharacters(field, max),
      noNul(field),
      wellFormed(field),
    )
    .annotateKey({ messageMissingKey: `${field} is required` });

/** An optional field that may also be `null`; `typeMessage` is used when the value has the wrong type. */
export const optionalField = <S extends Schema.Top>(schema: S, typeMessage: string) =>
  Schema.optionalKey(Schema.NullOr(schema).annotate({ message: typeMessage }));

/** An optional text field of at most `max` characters. */
export const optionalText = (field: string, max: number) =>
  optionalField(
    Schema.String.check(maxCharacters(field, max), noNul(field), wellFormed(field)),
    `${field} must be a string`,
  );

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `text` is a real calendar date written `YYYY-MM-DD` (no 2026-02-30). */
export const isCalendarDate = (text: string): boolean => {
  const match = DATE.exec(text);
  if (match === null) return false;
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d && y >= 1900;
};

/** A calendar date string `YYYY-MM-DD`. */
export const CalendarDate = (field: string) =>
  Schema.String.check(
    Schema.makeFilter(isCalendarDate, { message: `${field} must be a calendar date written YYYY-MM-DD` }),
  );

const RECORD_ID = /^[1-9]\d{0,15}$/;

/** Parses a path `{id}`; anything that is not a positive integer cannot name a record. */
export const parseRecordId = (text: string): number | undefined => {
  if (!RECORD_ID.test(text)) return undefined;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : undefined;
};
