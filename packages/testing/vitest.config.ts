import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.ts";

// Lint's decisions only: no database.
export default mergeConfig(sharedTestConfig, defineConfig({}));
