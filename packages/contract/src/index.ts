export * from "./openapi.ts";
