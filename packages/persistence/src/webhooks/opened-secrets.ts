import { type SecretCipher, type SecretKeyUnavailable, secretKeyUnavailable, sealedKeyId, SecretUnreadable } from "@platter/domain";
import { Result } from "effect";

/**
 * Signing secrets opened once per stored value, not once per delivery: the claims that hand
 * deliveries out read each endpoint's sealed secret with every delivery, and opening it
 * (AES-256-GCM) each time would cost the dispatcher CPU per delivery. One entry per row a secret is
 * sealed for (an endpoint, for its current and its previous secret), holding the stored values it
 * opened: a rotated or re-sealed secret (a new value, a new IV) misses and is opened anew, and a
 * value copied onto another row is opened for that row (and fails its tag there). Bounded, the
 * oldest entry leaving first. The secrets stay in the process's memory only, as the process
 * holding them to sign does anyway.
 */
export interface OpenedSecrets {
  /** The secret `stored` holds for the row `context` names (opened, or from the cache). */
  readonly open: (stored: string, context: string) => string;
  /** Entries held now (tests and metrics). */
  readonly size: () => number;
}

/** How many opened secrets a process keeps by default: well above the endpoints one dispatcher serves at once. */
export const OPENED_SECRETS_CAPACITY = 10_000;

/** A cache of opened secrets on `cipher`, holding at most `capacity` of them. */
export const openedSecrets = (cipher: SecretCipher, capacity = OPENED_SECRETS_CAPACITY): OpenedSecrets => {
  // Per row: the stored values opened for it (its current secret and, during a rotation, the previous one).
  const opened = new Map<string, Array<{ readonly stored: string; readonly secret: string }>>();
  return {
    open: (stored, context) => {
      const row = opened.get(context);
      if (row !== undefined) {
        for (const entry of row) if (entry.stored === stored) return entry.secret;
      }
      const secret = cipher.open(stored, context);
      // Two values a row: the one just opened and the one before it (a rotation's overlap signs with both).
      const kept = row === undefined ? [] : row.slice(-1);
      if (row === undefined && opened.size >= capacity) opened.delete(opened.keys().next().value!);
      opened.set(context, [...kept, { stored, secret }]);
      return secret;
    },
    size: () => opened.size,
  };
};

/** What opens stored secrets: the cipher itself, or its cache (`OpenedSecrets`). */
export type SecretOpener = Pick<SecretCipher, "open">;

/**
 * `stored` opened for the row `context` names, or `SecretKeyUnavailable` (naming the key it was
 * sealed with) when this process's keys do not open it: a key it lacks, or another key under that
 * id. One row this process cannot open is that row's own failure, never a defect of the claim, page
 * or stream around it: the dispatcher's claim leaves such a delivery unsent under its lease, a reveal,
 * a rotation and a listener's opening answer the typed error. Any other failure stays a defect.
 */
export const openOrUnavailable = (opener: SecretOpener, stored: string, context: string): Result.Result<string, SecretKeyUnavailable> => {
  try {
    return Result.succeed(opener.open(stored, context));
  } catch (error) {
    if (!(error instanceof SecretUnreadable)) throw error;
    return Result.fail(secretKeyUnavailable(sealedKeyId(stored) ?? "none (not sealed)"));
  }
};

/** An endpoint's (or listener's) signing secrets as stored: the current one, and the one before while its overlap lasts. */
export interface StoredEndpointSecrets {
  readonly secret: string;
  readonly previous_secret: string | null;
}

/** Both of an endpoint's stored signing secrets opened (`openOrUnavailable`), or the failure of the first that does not open. */
export const openEndpointSecrets = (
  opener: SecretOpener, row: StoredEndpointSecrets, context: string,
): Result.Result<{ readonly secret: string; readonly previousSecret: string | undefined }, SecretKeyUnavailable> => {
  const secret = openOrUnavailable(opener, row.secret, context);
  if (Result.isFailure(secret)) return Result.fail(secret.failure);
  if (row.previous_secret === null) return Result.succeed({ secret: secret.success, previousSecret: undefined });
  const previous = openOrUnavailable(opener, row.previous_secret, context);
  return Result.isFailure(previous) ? Result.fail(previous.failure) : Result.succeed({ secret: secret.success, previousSecret: previous.success });
};
