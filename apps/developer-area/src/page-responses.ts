import { parseRecordId, UnknownPage } from "@platter/domain";
import type { Context } from "koa";

/** How the area's routes answer: an HTML page with a status, a 303 to another page, and the record id of a path. */

/** Answers `body` as an HTML page with `status`. */
export const page = (ctx: Context, status: number, body: string): void => {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.body = body;
};

/** Answers 303 See Other to `location` (after a POST, the browser GETs it). */
export const redirect = (ctx: Context, location: string): void => {
  ctx.status = 303;
  ctx.redirect(location);
};

/** The path parameter `name` as a record id; anything else is the 404 page, like an id that names no record. */
export const recordIdOf = (ctx: Context, name = "id"): number => {
  const id = parseRecordId(String(ctx.params[name]));
  if (id === undefined) throw new UnknownPage();
  return id;
};
