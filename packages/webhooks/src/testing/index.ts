export * from "./dns-responder.ts";
export * from "./in-memory-delivery-storage.ts";
export * from "./test-clock-time.ts";
