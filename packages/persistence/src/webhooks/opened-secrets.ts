import type { SecretCipher } from "@platter/domain";

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
