import { formatTraceparent } from "@platter/domain";
import { Effect } from "effect";

/**
 * Storage's part of tracing: a span per statement (the Database and OrgSql statement layer) when
 * the process exports traces, and the trace context a message is written with. With tracing off
 * nothing here is called on a statement's way (`Database.statementSpans` is false): no span, no
 * context lookup, nothing per call (docs/conventions.md, Storage).
 */

/** The table a plain `insert into <table>` statement writes, for its span's `db.collection.name`. */
const insertedTable = (text: string): string | undefined => /^\s*insert\s+into\s+([a-z_][a-z0-9_]*)/i.exec(text)?.[1];

/** The operation a statement performs, as `db.operation.name` says it: its first keyword (`SELECT`, `INSERT`, `WITH`…). */
const operationOf = (text: string): string => {
  const match = /^\s*\(?\s*([a-zA-Z]+)/.exec(text);
  return match === null ? "QUERY" : match[1]!.toUpperCase();
};

/**
 * `statement` in a client span named for its operation (`db.system.name` postgresql,
 * `db.operation.name`, and `db.collection.name` when known); never its bound values nor its text.
 */
export const inStatementSpan = <A, E, R>(
  statement: Effect.Effect<A, E, R>, text: string, collection: string | undefined = insertedTable(text),
): Effect.Effect<A, E, R> => {
  const operation = operationOf(text);
  const attributes: Record<string, unknown> = { "db.system.name": "postgresql", "db.operation.name": operation };
  if (collection !== undefined) attributes["db.collection.name"] = collection;
  return Effect.withSpan(statement, collection === undefined ? operation : `${operation} ${collection}`, {
    kind: "client", attributes, captureStackTrace: false,
  });
};

/** Whether a span id is a real one (a tracer's), not the no-op span a disabled tracer gives. */
const HEX_TRACE = /^[0-9a-f]{32}$/;
const HEX_SPAN = /^[0-9a-f]{16}$/;

/**
 * The `traceparent` of the span the fiber runs in (the creating request's), or null: outside any
 * span, or under a tracer that exports nothing. A message is written with it.
 */
export const currentTraceparent: Effect.Effect<string | null> = Effect.match(Effect.currentParentSpan, {
  onFailure: () => null,
  onSuccess: (span) =>
    HEX_TRACE.test(span.traceId) && HEX_SPAN.test(span.spanId) && span.traceId !== "0".repeat(32)
      ? formatTraceparent({ traceId: span.traceId, spanId: span.spanId, sampled: span.sampled })
      : null,
});
