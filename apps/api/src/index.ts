export * from "./app.ts";
export * from "./config.ts";
export * from "./http-errors.ts";
export * from "./logger.ts";
export * from "./server.ts";
export * from "./services.ts";
export * from "./openapi.ts";
