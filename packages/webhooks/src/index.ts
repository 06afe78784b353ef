export * from "./attempt-writer.ts";
export * from "./delivery-attempt.ts";
export * from "./ssrf-guard.ts";
export * from "./webhook-dispatcher.ts";
export * from "./webhook-resolver.ts";
