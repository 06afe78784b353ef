import type { TestProject } from "vitest/node";
import { startTestPostgres } from "./test-postgres.ts";

import "./provided-context.ts";

/** Vitest global setup: one PostgreSQL server per test run; test files make their own databases on it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestPostgres();
  project.provide("pgAdminUrl", server.adminUrl);
  return server.stop;
}
