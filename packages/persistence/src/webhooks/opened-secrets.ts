import type { SecretCipher } from "@platter/domain";

/**
 * Signing secrets opened once per stored value, not once per delivery: the claims that hand
 * deliveries out read each endpoint's sealed secret with every delivery, and opening it
 * (AES-256-GCM) each time would cost the dispatcher CPU per delivery. Keyed by the stored value
 * and the row it is sealed for, so a rotated or re-sealed secret (a new value, a new IV) misses and
 * is opened anew; bounded, the oldest entry leaving first. The cache holds secrets in the process's
 * memory only, as the process holding them to sign does anyway.
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
  const opened = new Map<string, string>();
  return {
    open: (stored, context) => {
      const key = `${context}\n${stored}`;
      const hit = opened.get(key);
      if (hit !== undefined) return hit;
      const secret = cipher.open(stored, context);
      if (opened.size >= capacity) opened.delete(opened.keys().next().value!);
      opened.set(key, secret);
      return secret;
    },
    size: () => opened.size,
  };
};
