import { describe, expect, it } from "vitest";
import { organizationShare, originShare } from "./delivery.ts";

/** One dispatcher's share of an organization's attempts in flight. */

describe("organizationShare", () => {
  it.each([
    // Unset: all of the dispatcher's slots but a reserve of the endpoint cap or a sixteenth, whichever is more.
    [{ concurrency: 256, endpointConcurrency: 16, organizationConcurrency: undefined }, 1, 240],
    [{ concurrency: 256, endpointConcurrency: 16, organizationConcurrency: undefined }, 4, 240],
    [{ concurrency: 1024, endpointConcurrency: 16, organizationConcurrency: undefined }, 1, 960],
    [{ concurrency: 32, endpointConcurrency: 4, organizationConcurrency: undefined }, 1, 28],
    // The reserve is at most a quarter of the slots, however large the endpoint cap.
    [{ concurrency: 4, endpointConcurrency: 16, organizationConcurrency: undefined }, 1, 3],
    [{ concurrency: 256, endpointConcurrency: 256, organizationConcurrency: undefined }, 1, 192],
    // Set: a cap across all dispatchers, divided between those live, rounded up.
    [{ concurrency: 256, endpointConcurrency: 16, organizationConcurrency: 100 }, 1, 100],
    [{ concurrency: 256, endpointConcurrency: 16, organizationConcurrency: 100 }, 3, 34],
    [{ concurrency: 256, endpointConcurrency: 16, organizationConcurrency: 1 }, 4, 1],
  ])("%o with %i dispatchers live is %i", (settings, dispatchers, share) => {
    expect(organizationShare(settings, dispatchers)).toBe(share);
  });
});

describe("originShare", () => {
  it.each([[64, 48], [8, 6], [6, 4], [2, 1], [1, 1]])("of %i connections is %i", (connections, share) => {
    expect(originShare(connections)).toBe(share);
  });
});
