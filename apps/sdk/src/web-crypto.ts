/**
 * Web Crypto wherever the SDK runs: the global `crypto` (browsers, Deno, Bun, edge runtimes,
 * Node ≥ 19), else Node 18's `node:crypto` `webcrypto`, loaded by a dynamic import only when
 * needed so nothing Node-specific is imported elsewhere.
 */

/** The Web Crypto API (`crypto.subtle`, `crypto.randomUUID`). */
export type WebCrypto = typeof globalThis.crypto;

let loaded: Promise<WebCrypto> | undefined;

const load = async (): Promise<WebCrypto> => {
  const global = (globalThis as { crypto?: WebCrypto }).crypto;
  if (global?.subtle !== undefined && typeof global.randomUUID === "function") return global;
  const nodeCrypto = await import("node:crypto");
  return nodeCrypto.webcrypto as unknown as WebCrypto;
};

/** The Web Crypto API of this runtime, loaded once. */
export const webCrypto = (): Promise<WebCrypto> => (loaded ??= load());

/** A random UUID v4, e.g. for an Idempotency-Key. */
export const randomUuid = async (): Promise<string> => (await webCrypto()).randomUUID();
