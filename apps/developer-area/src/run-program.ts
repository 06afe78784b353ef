import { type RequestRuntime, type RequestStorage, requestOutcome, runRequest } from "@platter/persistence";
import type { Effect } from "effect";

/**
 * Runs one request's storage program: its value, or thrown what `requestOutcome` makes of its
 * Cause (an expected failure, `DatabaseUnavailable`, `ShuttingDown`, or a defect), which the error
 * pages answer.
 */
export const runProgram = async <A, E>(runtime: RequestRuntime, program: Effect.Effect<A, E, RequestStorage>): Promise<A> =>
  requestOutcome(await runRequest(runtime, program));
