import { defineConfig } from "vitest/config";

/** Shared test settings: workspace packages resolve to their TypeScript source. */
export const sharedTestConfig = defineConfig({
  resolve: { conditions: ["@platter/source"] },
  ssr: { resolve: { conditions: ["@platter/source"] } },
  // The global setup (@platter/testing's) runs in vitest's own environment, which reads workspace packages so too
  // (it starts PostgreSQL through `@platter/postgres`).
  environments: { __vitest__: { resolve: { conditions: ["@platter/source"] } } },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The test keyring (TEST_SECRET_KEYS_TEXT in @platter/testing): processes a test
    // starts with DATABASE_URL need one, as every process with a configured database does.
    env: { SECRET_ENCRYPTION_KEYS: "test:dGVzdC1zZWNyZXQta2V5LW9mLTMyLWJ5dGVzLSEhISE=" },
  },
});
