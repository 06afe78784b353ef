/**
 * Keeping secrets out of the log. A sign-in link's token is in its path (`/sign-in/<token>`), so
 * a path, or an error's message or stack that quotes one, is logged with the token replaced.
 */

/** What a token is replaced with in the log. */
export const REDACTED = "[redacted]";

/** A sign-in path's token: whatever follows `/sign-in/` up to the next separator. */
const SIGN_IN_TOKEN = /(\/sign-in\/)[^/?#\s"'<>]+/g;

/** Path parameters that carry a secret. */
const SECRET_PARAMS = ["token"] as const;

/** What redaction needs of a request: its path and the router's path parameters. */
export interface RedactedRequest {
  readonly path: string;
  readonly params?: unknown;
}

/** `text` with every sign-in token replaced, and the request's own secret path parameters wherever they appear. */
export const redactTokens = (text: string, ctx?: RedactedRequest): string => {
  let redacted = text.replace(SIGN_IN_TOKEN, `$1${REDACTED}`);
  for (const name of SECRET_PARAMS) {
    const value = (ctx?.params as Record<string, unknown> | undefined)?.[name];
    if (typeof value === "string" && value.length >= 8) redacted = redacted.split(value).join(REDACTED);
  }
  return redacted;
};

/** The request's path as it may be logged. */
export const loggedPath = (ctx: RedactedRequest): string => redactTokens(ctx.path, ctx);

/** An error as it may be logged: its type, message and stack with tokens redacted (pino's `err` shape). */
export const loggedError = (error: unknown, ctx?: RedactedRequest): { type: string; message: string; stack?: string } => {
  if (!(error instanceof Error)) return { type: typeof error, message: redactTokens(String(error), ctx) };
  return {
    type: error.constructor.name,
    ...(typeof (error as unknown as { code?: unknown }).code === "string" ? { code: (error as unknown as { code: string }).code } : {}),
    message: redactTokens(error.message, ctx),
    ...(error.stack === undefined ? {} : { stack: redactTokens(error.stack, ctx) }),
  };
};
