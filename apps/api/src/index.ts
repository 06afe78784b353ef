export * from "./app.ts";
export * from "./config.ts";
export * from "./server.ts";
export * from "./budgeted-runner.ts";
export * from "./observability.ts";
export * from "./request-log.ts";
