/**
 * W3C Trace Context (`traceparent`): how a request names the trace it belongs to, and how a
 * message carries its creating request's trace to every delivery attempt of it.
 */

/** A span's place in a trace as `traceparent` carries it. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero: the parent span. */
  readonly spanId: string;
  /** The `sampled` flag: whether the caller records this trace. */
  readonly sampled: boolean;
}

/** Version 00's exact form; a later version starts the same and may carry more after a dash. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/** Longest `traceparent` header read (version 00 is 55 characters; later versions may add fields). */
export const TRACEPARENT_MAX_CHARACTERS = 256;

/**
 * A `traceparent` header read as W3C Trace Context says: version 00 exactly, a later version by
 * its first four fields, never version ff, nor an all-zero trace or span id; anything else is
 * undefined (the request starts a trace of its own, as the recommendation says, never a 4xx).
 */
export const parseTraceparent = (header: string | undefined): TraceParent | undefined => {
  if (header === undefined || header.length > TRACEPARENT_MAX_CHARACTERS) return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
};

/** The version-00 `traceparent` of a span (what a message stores, at most 55 characters). */
export const formatTraceparent = (parent: TraceParent): string =>
  `00-${parent.traceId}-${parent.spanId}-${parent.sampled ? "01" : "00"}`;
