import { describe, expect, expectTypeOf, it } from "vitest";
import { type ApiKeyRepository, type DispatcherStorage, type Housekeeping, type RequestStorage, type Sandboxes, dispatcherStorage, requestStorage } from "../src/index.ts";
import type { DeliveryQueue } from "../src/dispatcher.ts";
import type { BusinessRecords, Operator } from "../src/operator.ts";

/**
 * Each process gets only its own stores. The types say so (a program of the API or the Developer
 * area that asks for the operator's store or the delivery queue does not compile: `tsc` checks
 * these in `npm test`), and so do the layers the processes open.
 */

describe("a process's stores", () => {
  it("leave the operator's scope maker and the delivery queue out of a request process's", () => {
    expectTypeOf<ApiKeyRepository>().toExtend<RequestStorage>();
    expectTypeOf<Operator>().not.toExtend<RequestStorage>();
    // Business actions' statements run in a request process for a sandbox's triggers only (the application's
    // `Sandbox.trigger`, which refuses a live organization); lint keeps them out of the apps' code.
    expectTypeOf<BusinessRecords>().toExtend<RequestStorage>();
    expectTypeOf<Sandboxes>().toExtend<RequestStorage>();
    expectTypeOf<DeliveryQueue>().not.toExtend<RequestStorage>();
    expect(requestStorage).not.toBe(dispatcherStorage);
  });

  it("leave the operator's stores and the organizations' repositories out of the dispatcher's", () => {
    expectTypeOf<DeliveryQueue>().toExtend<DispatcherStorage>();
    expectTypeOf<Housekeeping>().toExtend<DispatcherStorage>();
    expectTypeOf<Operator>().not.toExtend<DispatcherStorage>();
    expectTypeOf<ApiKeyRepository>().not.toExtend<DispatcherStorage>();
  });
});
