import type { Persistence, PlatformRuntime } from "@platter/persistence";
import { Cause, type Effect, Exit } from "effect";

/**
 * Runs one request's program. An expected failure is thrown as the tagged error itself (the
 * error middleware maps it); a defect is thrown as an ordinary error and becomes an opaque 500.
 */
export const runProgram = async <A, E>(runtime: PlatformRuntime, program: Effect.Effect<A, E, Persistence>): Promise<A> => {
  const exit = await runtime.runPromiseExit(program);
  if (Exit.isSuccess(exit)) return exit.value;
  throw Cause.squash(exit.cause);
};
