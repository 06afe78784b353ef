import { defineConfig } from "vitest/config";

/** Shared test settings: workspace packages resolve to their TypeScript source. */
export const sharedTestConfig = defineConfig({
  resolve: { conditions: ["@platter/source"] },
  ssr: { resolve: { conditions: ["@platter/source"] } },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
