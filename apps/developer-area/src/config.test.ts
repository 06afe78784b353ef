import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_DEVELOPER_AREA_LIMITS, loadDeveloperAreaConfig } from "./config.ts";

/** The Developer area's own variables: `DEVELOPER_AREA_FRAME_ANCESTORS` takes exact origins only, and the per-organization limits. */

const frameAncestors = (value: string | undefined) => loadDeveloperAreaConfig({ DEVELOPER_AREA_FRAME_ANCESTORS: value }).frameAncestors;

describe("DEVELOPER_AREA_FRAME_ANCESTORS", () => {
  it.each<[string | undefined, string]>([
    [undefined, "'self'"],
    ["'self'", "'self'"],
    ["'none'", "'none'"],
    ["https://app.example.com", "https://app.example.com"],
    ["'self' https://app.example.com http://localhost:8080", "'self' https://app.example.com http://localhost:8080"],
    ["  https://App.Example.com   https://[::1]:8443 ", "https://app.example.com https://[::1]:8443"],
  ])("accepts %j as %j", (value, policy) => {
    expect(frameAncestors(value)).toBe(policy);
  });

  it.each<[string, RegExp]>([
    ["*", /"\*" is not an exact http\(s\) origin/],
    ["https:", /"https:" is not an exact http\(s\) origin/],
    ["https://*.example.com", /"https:\/\/\*\.example\.com" is not an exact http\(s\) origin/],
    ["'self' *", /"\*" is not/],
    ["https://app.example.com/", /"https:\/\/app\.example\.com\/" is not an exact origin: write it https:\/\/app\.example\.com$/],
    ["https://app.example.com/embed", /write it https:\/\/app\.example\.com$/],
    ["https://app.example.com:443", /write it https:\/\/app\.example\.com$/],
    ["app.example.com", /"app\.example\.com" is not an exact http\(s\) origin/],
    ["ftp://files.example.com", /not an exact http\(s\) origin/],
    ["'unsafe-inline'", /"'unsafe-inline'" is not/],
    ["'none' https://app.example.com", /'none' must stand alone/],
    ["'self'; script-src *", /must be 'self', 'none', or exact origins/],
    ["https://a.example.com,https://b.example.com", /must be 'self', 'none', or exact origins/],
  ])("refuses %j at start, naming the variable", (value, message) => {
    const reading = () => frameAncestors(value);
    expect(reading).toThrow(ConfigError);
    expect(reading).toThrow(/^DEVELOPER_AREA_FRAME_ANCESTORS/);
    expect(reading).toThrow(message);
  });
});

describe("the per-organization limits", () => {
  it("default to 30 test events, 10 new endpoints, 30 replays, 20 key changes, 60 endpoint changes, 10 sandbox resets, 30 switches and 10 alert addresses per 10 minutes", () => {
    expect(loadDeveloperAreaConfig({}).limits).toEqual(DEFAULT_DEVELOPER_AREA_LIMITS);
    expect(DEFAULT_DEVELOPER_AREA_LIMITS).toEqual({
      testEvents: 30, endpointCreates: 10, replays: 30, keyChanges: 20, endpointChanges: 60, sandboxResets: 10, sandboxSwitches: 30, alertAddresses: 10, windowMs: 600_000,
    });
  });

  it("are read from their variables", () => {
    const env = {
      DEVELOPER_AREA_TEST_EVENTS: "5", DEVELOPER_AREA_ENDPOINT_CREATES: "2", DEVELOPER_AREA_REPLAYS: "7", DEVELOPER_AREA_KEY_CHANGES: "3",
      DEVELOPER_AREA_ENDPOINT_CHANGES: "4", DEVELOPER_AREA_SANDBOX_RESETS: "6", DEVELOPER_AREA_SANDBOX_SWITCHES: "8", DEVELOPER_AREA_ALERT_ADDRESSES: "9",
      DEVELOPER_AREA_LIMIT_WINDOW: "1h",
    };
    expect(loadDeveloperAreaConfig(env).limits).toEqual({
      testEvents: 5, endpointCreates: 2, replays: 7, keyChanges: 3, endpointChanges: 4, sandboxResets: 6, sandboxSwitches: 8, alertAddresses: 9, windowMs: 3_600_000,
    });
  });

  it.each([
    ["DEVELOPER_AREA_TEST_EVENTS", "0"],
    ["DEVELOPER_AREA_ENDPOINT_CREATES", "many"],
    ["DEVELOPER_AREA_REPLAYS", "-1"],
    ["DEVELOPER_AREA_KEY_CHANGES", "0"],
    ["DEVELOPER_AREA_ENDPOINT_CHANGES", "1.5"],
    ["DEVELOPER_AREA_SANDBOX_RESETS", "none"],
    ["DEVELOPER_AREA_SANDBOX_SWITCHES", "0"],
    ["DEVELOPER_AREA_LIMIT_WINDOW", "500ms"],
    ["WEBHOOK_ENDPOINTS_PER_ORGANIZATION", "0"],
    ["DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION", "0"],
    ["DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION", "some"],
  ])("refuse a bad %s (%j), naming it", (variable, value) => {
    expect(() => loadDeveloperAreaConfig({ [variable]: value })).toThrow(new RegExp(`^${variable} must be`));
  });

  it("reads WEBHOOK_ENDPOINTS_PER_ORGANIZATION (50 by default), as the CLI does", () => {
    expect(loadDeveloperAreaConfig({}).endpointsPerOrganization).toBe(50);
    expect(loadDeveloperAreaConfig({ WEBHOOK_ENDPOINTS_PER_ORGANIZATION: "3" }).endpointsPerOrganization).toBe(3);
  });
});

describe("DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION", () => {
  it("bounds an organization's signed-in requests in flight: 4 by default (under half the default pool of 10)", () => {
    expect(loadDeveloperAreaConfig({}).pageLoadsPerOrganization).toBe(4);
    expect(loadDeveloperAreaConfig({ DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION: "2" }).pageLoadsPerOrganization).toBe(2);
  });
});

describe("SMTP_URL and SMTP_FROM", () => {
  it("leave mail off when SMTP_URL is unset, and read both when set", () => {
    expect(loadDeveloperAreaConfig({}).mailServer).toBeUndefined();
    expect(loadDeveloperAreaConfig({ SMTP_URL: "smtp://127.0.0.1:25", SMTP_FROM: "Platter <alerts@example.com>" }).mailServer)
      .toEqual({ smtpUrl: "smtp://127.0.0.1:25", from: "Platter <alerts@example.com>" });
    expect(loadDeveloperAreaConfig({}).alertRecipientsPerOrganization).toBe(10);
    expect(loadDeveloperAreaConfig({ ALERT_RECIPIENTS_PER_ORGANIZATION: "3" }).alertRecipientsPerOrganization).toBe(3);
  });

  it.each([
    [{ SMTP_URL: "http://mail.example.com", SMTP_FROM: "a@example.com" }, /^SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL$/],
    [{ SMTP_URL: "not a url", SMTP_FROM: "a@example.com" }, /^SMTP_URL must be/],
    [{ SMTP_URL: "smtp://user:secret@mail.example.com" }, /^SMTP_FROM must be set with SMTP_URL/],
    [{ SMTP_URL: "smtp://127.0.0.1", SMTP_FROM: "nobody" }, /^SMTP_FROM must be an e-mail address/],
    [{ ALERT_RECIPIENTS_PER_ORGANIZATION: "0" }, /ALERT_RECIPIENTS_PER_ORGANIZATION/],
  ])("refuses %j at start, naming the variable and never the URL's password", (env, message) => {
    const reading = () => loadDeveloperAreaConfig(env);
    expect(reading).toThrow(ConfigError);
    expect(reading).toThrow(message);
    expect(() => reading()).not.toThrow(/secret/);
  });
});
