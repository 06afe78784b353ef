import type { Context } from "koa";
import getRawBody from "raw-body";
import { UnreadableForm } from "@platter/domain";

/** Largest form body accepted: the area's forms carry a name and a token. */
export const FORM_LIMIT_BYTES = 16 * 1024;

const FORM_MEDIA_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/** The fields of a urlencoded form body (the first value of each); anything else is `UnreadableForm`. */
export const readForm = async (ctx: Context): Promise<Readonly<Record<string, string>>> => {
  if (!FORM_MEDIA_TYPE.test(ctx.get("content-type"))) throw new UnreadableForm();
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: FORM_LIMIT_BYTES, encoding: "utf8" });
  } catch {
    // The unread rest of the body would spoil the next request on this connection.
    ctx.set("connection", "close");
    throw new UnreadableForm();
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) if (!Object.hasOwn(fields, name)) fields[name] = value;
  return fields;
};
