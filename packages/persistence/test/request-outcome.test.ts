import { DatabaseUnavailable, NotFound, ShuttingDown } from "@platter/domain";
import { Cause, Effect, Exit, Fiber } from "effect";
import { describe, expect, it } from "vitest";
import { requestOutcome } from "../src/index.ts";

/**
 * A request's program's end, read from its whole Cause as effect's `HttpServerError.causeResponse`
 * reads one: the expected failure first (an outage is one, typed by the driver), then a defect, and an
 * interruption as `ShuttingDown`, never squashed into a defect.
 */

const outage = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
const bug = new Error("a bug");

/** What `requestOutcome` throws for `exit`. */
const thrownBy = (exit: Exit.Exit<unknown, unknown>): unknown => {
  try {
    requestOutcome(exit);
  } catch (thrown) {
    return thrown;
  }
  throw new Error("requestOutcome returned");
};

describe("requestOutcome", () => {
  it("returns a success's value", () => {
    expect(requestOutcome(Exit.succeed(7))).toBe(7);
  });

  it.each([
    ["a failure", Exit.fail(new NotFound()), NotFound],
    ["a failure beside an interruption", Exit.failCause(Cause.combine(Cause.interrupt(1), Cause.fail(new NotFound()))), NotFound],
    ["a typed outage", Exit.fail(new DatabaseUnavailable({ reason: outage })), DatabaseUnavailable],
    ["a typed outage a caller made a defect", Exit.die(new DatabaseUnavailable({ reason: outage })), DatabaseUnavailable],
    ["an outage beside an interruption", Exit.failCause(Cause.combine(Cause.interrupt(1), Cause.fail(new DatabaseUnavailable({ reason: outage })))), DatabaseUnavailable],
    ["an interruption", Exit.failCause(Cause.interrupt(1)), ShuttingDown],
  ] as const)("throws %s as its tagged error", (_case, exit, expected) => {
    expect(thrownBy(exit)).toBeInstanceOf(expected);
  });

  it("throws a defect as it is, reading no message: the driver types an outage before it gets here", () => {
    expect(thrownBy(Exit.die(bug))).toBe(bug);
    expect(thrownBy(Exit.die(outage))).toBe(outage);
  });

  it("answers a program interrupted while it runs as ShuttingDown", async () => {
    const fiber = Effect.runFork(Effect.never);
    const exit = await Effect.runPromise(Effect.andThen(Fiber.interrupt(fiber), Fiber.await(fiber)));
    expect(thrownBy(exit)).toBeInstanceOf(ShuttingDown);
  });
});
