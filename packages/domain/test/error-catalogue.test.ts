import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOGUE, type ErrorCatalogue, errorAnswer, InvalidInput, isPlatterError, jsonAnswer, NotFound } from "../src/index.ts";

/**
 * The error catalogue is the one place a tagged error gets its status and text: every tagged error
 * defined anywhere in the repository's sources has an entry, and an error or a catalogue that
 * leaves one out does not compile.
 */

const ROOT = join(import.meta.dirname, "../../..");

/** Every `TaggedError` class defined in the sources of the apps and packages, as `{ file, tag }`. */
const definedTaggedErrors = (): ReadonlyArray<{ readonly file: string; readonly tag: string }> =>
  ["apps", "packages"].flatMap((area) =>
    readdirSync(join(ROOT, area)).flatMap((project) => {
      const src = join(ROOT, area, project, "src");
      let files: ReadonlyArray<string>;
      try {
        files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
      } catch {
        return [];
      }
      return files.flatMap((file) =>
        [...readFileSync(join(src, file), "utf8").matchAll(/TaggedError<\w+>\(\)\(\s*"(\w+)"/g)].map((match) => ({
          file: `${area}/${project}/src/${file}`, tag: match[1]!,
        }))
      );
    })
  );

describe("the error catalogue", () => {
  it("has an entry for every tagged error defined in the apps' and packages' sources", () => {
    const defined = definedTaggedErrors();
    expect(defined.length).toBeGreaterThanOrEqual(Object.keys(ERROR_CATALOGUE).length);
    expect(defined.filter(({ tag }) => !Object.hasOwn(ERROR_CATALOGUE, tag))).toEqual([]);
  });

  it("defines every tagged error in the domain, where every edge may import it", () => {
    expect(definedTaggedErrors().filter(({ file }) => !file.startsWith("packages/domain/src/"))).toEqual([]);
  });

  it.each(Object.keys(ERROR_CATALOGUE))("answers %s with a 4xx or a 503, an outage always a 503", (tag) => {
    const answer = errorAnswer(sampleOf(tag));
    expect(answer.status >= 400 && answer.status < 500 || answer.status === 503).toBe(true);
    expect(answer.kind !== "outage" || answer.status === 503).toBe(true);
    expect(answer.text.length).toBeGreaterThan(0);
  });

  it("answers anything else as a defect: an opaque 500", () => {
    expect(isPlatterError(new Error("boom"))).toBe(false);
    expect(jsonAnswer(new Error("boom"))).toEqual({ status: 500, headers: {}, body: { error: "Internal server error" } });
    expect(jsonAnswer({ _tag: "NotInTheCatalogue" })).toEqual({ status: 500, headers: {}, body: { error: "Internal server error" } });
  });

  it("does not compile without an entry for a tag, nor answer an error it has none for", () => {
    const { NotFound: _left, ...withoutNotFound } = ERROR_CATALOGUE;
    // @ts-expect-error: a catalogue missing one tag's entry is not an `ErrorCatalogue`
    const incomplete: ErrorCatalogue = withoutNotFound;
    class Invented extends Schema.TaggedError<Invented>()("Invented", {}) {}
    // @ts-expect-error: a tagged error without an entry cannot be given to the catalogue
    expect(() => errorAnswer(new Invented())).toThrow(TypeError);
    expect(Object.hasOwn(incomplete, "NotFound")).toBe(false);
    expect(errorAnswer(new NotFound()).status).toBe(404);
    expect(errorAnswer(new InvalidInput({ message: "x".repeat(5000) })).text.length).toBeLessThan(5000);
  });
});

/** An instance of the error tagged `tag`, built from the tag alone (the fields' values do not change the status). */
const sampleOf = (tag: string) => {
  const fields: Record<string, unknown> = {
    message: "a refusal", limitBytes: 1024, reason: "expired", limitedBy: "key", retryAfterSeconds: 3, keyId: "k", limit: 2, endpointId: 1,
    what: "test events", allowed: 2, windowMs: 60_000, back: "/webhooks",
  };
  return { _tag: tag, ...fields } as Parameters<typeof errorAnswer>[0];
};
