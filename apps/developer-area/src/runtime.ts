import { isDatabaseUnavailable, type Persistence, type PlatformRuntime } from "@platter/persistence";
import { Cause, type Effect, Exit } from "effect";
import { AreaUnavailable } from "./page-errors.ts";

/**
 * Runs one request's storage program. An expected failure is thrown as the tagged error itself
 * (the error pages map it); a database outage as `AreaUnavailable` (503); any other defect as an
 * ordinary error, which becomes an opaque 500 page.
 */
export const runProgram = async <A, E>(runtime: PlatformRuntime, program: Effect.Effect<A, E, Persistence>): Promise<A> => {
  const exit = await runtime.runPromiseExit(program);
  if (Exit.isSuccess(exit)) return exit.value;
  const failure = Cause.squash(exit.cause);
  throw isDatabaseUnavailable(failure) ? new AreaUnavailable({ reason: failure }) : failure;
};
