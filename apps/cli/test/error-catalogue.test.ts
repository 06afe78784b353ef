import { errorAnswer, NotFound } from "@platter/domain";
import { ERROR_SAMPLES } from "@platter/testing";
import { describe, expect, it } from "vitest";
import { exitCodeOf, failureOf, LimitReached, messageOf, UsageError } from "../src/failures.ts";

/**
 * The CLI's edge of the error catalogue: every tagged error the catalogue knows ends a command with
 * the catalogue's text as its line and the exit code its kind says: 2 for a request the caller must
 * change (with the help hint unless it is a limit), 1 for a refusal or an outage.
 */

const EXIT_CODE_OF_KIND = { input: 2, limit: 2, refusal: 1, outage: 1 } as const;

describe("the CLI's line and exit code for each error of the catalogue", () => {
  it.each(Object.values(ERROR_SAMPLES).map((error) => [error._tag, error] as const))("%s", (_tag, error) => {
    const expected = errorAnswer(error);
    const failure = failureOf(error);
    expect(messageOf(failure)).toBe(expected.text);
    expect(exitCodeOf(failure)).toBe(EXIT_CODE_OF_KIND[expected.kind]);
    // The help hint follows a usage error only, never a limit reached.
    expect(failure instanceof UsageError && !(failure instanceof LimitReached)).toBe(expected.kind === "input");
  });

  it("says what was missing for NotFound when the command says it", () => {
    const failure = failureOf(new NotFound(), "no organization 12");
    expect([messageOf(failure), exitCodeOf(failure)]).toEqual(["no organization 12", 1]);
  });
});
