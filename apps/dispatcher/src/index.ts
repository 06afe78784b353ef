export * from "./config.ts";
export * from "./dispatcher-process.ts";
export * from "./metrics.ts";
