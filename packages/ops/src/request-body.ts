import { InvalidInput, PayloadTooLarge, UnsupportedMediaType } from "@platter/domain";
import type { Context } from "koa";
import getRawBody from "raw-body";

/** Largest request body accepted. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

/**
 * Reads and parses a JSON request body. A missing Content-Type is read as JSON (curl -d friendly);
 * another declared type is refused with 415; over 1 MiB with 413; broken JSON with 400.
 */
export const readJsonBody = async (ctx: Context): Promise<unknown> => {
  const type = ctx.get("content-type");
  if (type !== "" && !JSON_MEDIA_TYPE.test(type)) throw new UnsupportedMediaType();
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: BODY_LIMIT_BYTES, encoding: "utf8" });
  } catch (error) {
    if ((error as { type?: string }).type === "entity.too.large") throw new PayloadTooLarge({ limitBytes: BODY_LIMIT_BYTES });
    throw new InvalidInput({ message: "request body could not be read" });
  }
  if (text.trim() === "") throw new InvalidInput({ message: "request body must be a JSON object" });
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidInput({ message: "request body is not valid JSON" });
  }
};
