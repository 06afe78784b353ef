import type {
  ApiKeyRepository, ClientRepository, EventRepository, InvoiceRepository, OrganizationRepository, RecipeRepository,
} from "@platter/domain";
import { Cause, Effect, Exit, type ManagedRuntime } from "effect";

/** The repositories a request may use, provided once at start by a `ManagedRuntime`. */
export type ApiServices =
  | ApiKeyRepository | OrganizationRepository | EventRepository | RecipeRepository | ClientRepository | InvoiceRepository;

export type ApiRuntime = ManagedRuntime.ManagedRuntime<ApiServices, never>;

/**
 * Runs one request's program. An expected failure is thrown as the tagged error itself (the
 * error middleware maps it); a defect is thrown as an ordinary error and becomes an opaque 500.
 */
export const runProgram = async <A, E>(runtime: ApiRuntime, program: Effect.Effect<A, E, ApiServices>): Promise<A> => {
  const exit = await runtime.runPromiseExit(program);
  if (Exit.isSuccess(exit)) return exit.value;
  throw Cause.squash(exit.cause);
};
