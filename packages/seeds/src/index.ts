/**
 * Bulk seeding (`@platter/seeds`): set-based sample data for load tests and benchmarks
 * (`platter seed bulk`, tools/bench*, the delivery log of the Developer area's tests). The demo
 * data, which a sandbox ships at run time, is the application's (`@platter/application`).
 */
export type { BulkSeedOptions, SeedProgress } from "./bulk.ts";
export type { DeliveryLogSeedOptions } from "./delivery-log.ts";
export * from "./seeding.ts";
