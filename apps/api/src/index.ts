export * from "./app.ts";
export * from "./config.ts";
export * from "./server.ts";
export * from "./budgeted-runner.ts";
export * from "./observability.ts";
export * from "./rate-limits.ts";
export * from "./request-log.ts";
export { readJsonBody } from "./request-body.ts";
export { limitedAuthentication } from "./middleware/authenticate.ts";
