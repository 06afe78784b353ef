import type { Tracer } from "effect";
import type { Context } from "koa";

/**
 * A request's span (only when the process exports traces): made by the observability middleware,
 * kept on the request's context, the parent of every storage program the request runs
 * (`BudgetedRunner.run`), so its statements and the message it writes belong to its trace.
 */

const REQUEST_SPAN = Symbol("platter/api/request-span");

/** Keeps `span` as the request's. */
export const keepRequestSpan = (ctx: Context, span: Tracer.Span): void => {
  (ctx.state as { [REQUEST_SPAN]?: Tracer.Span })[REQUEST_SPAN] = span;
};

/** The request's span, if the process traces. */
export const requestSpanOf = (ctx: Context): Tracer.Span | undefined => (ctx.state as { [REQUEST_SPAN]?: Tracer.Span })[REQUEST_SPAN];
