import { errorAnswer } from "@platter/domain";
import { ERROR_SAMPLES, type ErrorSampleServer, serveErrorSamples } from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorPage, errorPages } from "../src/error-pages.ts";

/**
 * The Developer area's edge of the error catalogue: every tagged error the catalogue knows, thrown
 * below the area's error pages, is answered with the catalogue's status and headers, as a page on
 * the area's paths and as the catalogue's JSON (the API's answer) on the CLI's `/cli/` paths.
 */

let server: ErrorSampleServer;
let origin: string;
const logged: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const logger = pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
  server = await serveErrorSamples(errorPages(logger));
  origin = server.origin;
});
afterAll(() => server.close());

const samples = Object.values(ERROR_SAMPLES).map((error) => [error._tag, error] as const);

describe("the area's page for each error of the catalogue", () => {
  it.each(samples)("%s", async (tag, error) => {
    const expected = errorAnswer(error);
    const response = await fetch(`${origin}/pages/${tag}`);
    expect(response.status).toBe(expected.status);
    for (const [name, value] of Object.entries(expected.headers ?? {})) expect(response.headers.get(name)).toBe(value);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const page = await response.text();
    expect(page).toBe(errorPage(error).page);
    expect(page).toContain("<h1>");
  });
});

describe("the area's /cli/ JSON for each error of the catalogue", () => {
  it.each(samples)("%s", async (tag, error) => {
    const expected = errorAnswer(error);
    const response = await fetch(`${origin}/cli/${tag}`);
    expect(response.status).toBe(expected.status);
    for (const [name, value] of Object.entries(expected.headers ?? {})) expect(response.headers.get(name)).toBe(value);
    expect(await response.json()).toEqual({ error: expected.text });
  });
});

describe("a defect", () => {
  it("is an opaque 500 page, or 500 JSON under /cli/, and logged", async () => {
    const page = await fetch(`${origin}/pages/defect`);
    expect(page.status).toBe(500);
    expect(await page.text()).toContain("Something went wrong");
    const json = await fetch(`${origin}/cli/defect`);
    expect(json.status).toBe(500);
    expect(await json.json()).toEqual({ error: "Internal server error" });
    expect(logged.filter((line) => line["msg"] === "unhandled error")).toHaveLength(2);
  });
});
