import type { DatabaseUnavailable } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { driverCall } from "@platter/postgres";
import { Database, resealStoredSecrets } from "../database.ts";
import type { SealedCounts } from "../stored-secrets.ts";

/**
 * The operator's re-sealing of every stored secret with the current (first) key of
 * `SECRET_ENCRYPTION_KEYS` (`platter secrets reencrypt`): the step between putting a new key first
 * and dropping the old one.
 */
export class StoredSecretsResealing extends Context.Service<
  StoredSecretsResealing,
  {
    /** Re-seals every secret not sealed with the current key (and seals any in clear), in batches of their own transactions; how many. */
    readonly reseal: () => Effect.Effect<SealedCounts & { readonly keyId: string }, DatabaseUnavailable>;
  }
>()("platter/persistence/StoredSecretsResealing") {
  static readonly layer = Layer.effect(
    StoredSecretsResealing,
    Effect.gen(function* () {
      const database = yield* Database;
      return StoredSecretsResealing.of({
        reseal: () =>
          Effect.map(
            driverCall(() => resealStoredSecrets(database.orm, database.secrets)),
            (counts) => ({ ...counts, keyId: database.secrets.currentKeyId }),
          ),
      });
    }),
  );
}
