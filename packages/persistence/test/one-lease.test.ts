import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * One lease mechanism: every statement that takes, renews, settles or gives up a lease does it through
 * `src/webhooks/lease.ts`, so no other source file writes or tests the lease columns by hand (the
 * migrations, which made the columns, aside).
 */

const SOURCE = join(import.meta.dirname, "../src");
const LEASE_MODULE = join(SOURCE, "webhooks/lease.ts");

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "migrations" ? [] : sourceFiles(path);
    return path.endsWith(".ts") && path !== LEASE_MODULE ? [path] : [];
  });

/** A lease column written or compared with a time or a token, as only lease.ts may. */
const LEASE_BY_HAND = /\b(?:lease_token|lease_expires_at|listener_stream|listening_until)\s*(?:=|<|>=)\s*(?:null\b|now\(\)|gen_random_uuid|\$\{|\?)/;

describe("one lease mechanism", () => {
  it("no source file but webhooks/lease.ts takes, settles or clears a lease by hand", () => {
    const byHand = sourceFiles(SOURCE).flatMap((path) =>
      readFileSync(path, "utf8").split("\n").filter((line) => LEASE_BY_HAND.test(line)).map((line) => `${path.slice(SOURCE.length + 1)}: ${line.trim()}`));
    expect(byHand).toEqual([]);
  });
});
