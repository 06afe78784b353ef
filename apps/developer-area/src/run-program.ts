import { type RequestRuntime, type RequestStorage, requestOutcome, runRequest } from "@platter/persistence";
import type { Effect } from "effect";
import { AreaUnavailable } from "./page-errors.ts";

/**
 * Runs one request's storage program: its value, or thrown the expected failure itself (the error
 * pages map it), `AreaUnavailable` for a database outage (503), any other defect as it is (an
 * opaque 500 page).
 */
export const runProgram = async <A, E>(runtime: RequestRuntime, program: Effect.Effect<A, E, RequestStorage>): Promise<A> =>
  requestOutcome(await runRequest(runtime, program), (reason) => new AreaUnavailable({ reason }));
