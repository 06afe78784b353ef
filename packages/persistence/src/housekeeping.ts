import { IDEMPOTENCY_WINDOW_HOURS } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "./database.ts";
import { traced } from "./traced.ts";

/** Background clean-up across organizations: it only removes what has expired, never reads data out. */
export class Housekeeping extends Context.Service<
  Housekeeping,
  {
    /** Forgets Idempotency-Keys older than their window (lookups already ignore them; this reclaims the space). */
    readonly pruneIdempotencyKeys: () => Effect.Effect<void>;
  }
>()("platter/persistence/Housekeeping") {
  static readonly layer = Layer.effect(
    Housekeeping,
    Effect.gen(function* () {
      const { rows } = yield* Database;
      return Housekeeping.of({
        pruneIdempotencyKeys: traced("Housekeeping.pruneIdempotencyKeys")(Effect.fnUntraced(function* () {
          yield* rows(`delete from idempotency_keys where created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`);
        })),
      });
    }),
  );
}
