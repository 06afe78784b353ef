export * from "./ops-server.ts";
export * from "./process-lifecycle.ts";
