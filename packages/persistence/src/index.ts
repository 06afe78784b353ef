export * from "./database.ts";
export * from "./entities/index.ts";
export * from "./local-postgres.ts";
export * from "./operator.ts";
export * from "./repositories/index.ts";
export { migrationsList } from "./migrations/index.ts";
