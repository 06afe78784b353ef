import { UNTHROTTLED } from "@platter/ops";
import { WEBHOOK_EVENT_TYPES } from "@platter/domain";
import { Seeding } from "@platter/seeds";
import { createOrganization, createSandbox, type OrganizationFixture, startTestSmtpServer, type TestSmtpServer } from "@platter/testing";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_DEVELOPER_AREA_LIMITS } from "../src/index.ts";
import { type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * Property tests: whatever a signed-in browser sends to any page or form of the Developer area,
 * and whatever a key's tools send to any `/cli/` route, the area answers with a decision (a page,
 * a redirect, or the CLI's JSON with a status from the expected list), never with a 5xx. The
 * routes are the router's own (`RunningArea.routes`): a route added later is sent random input
 * without this file changing.
 */

/** Random requests per route: GET pages, POST forms, `/cli/` routes. Bounded: the whole file stays well under a minute. */
const RUNS = { page: 10, form: 10, cli: 40 } as const;

/** What a page or form of the area may answer (the 500 page is not among them). */
const AREA_STATUSES = [200, 201, 303, 400, 403, 404, 409, 410, 429];
/** What a `/cli/` route may answer. */
const CLI_STATUSES = [200, 201, 400, 401, 403, 404, 409, 413, 415, 429];

const SESSION_COOKIE = "platter_developer_session=";

let area: RunningArea;
/** Where the Alerts form mails its links: with mail configured, random input reaches the form's handler (without it, every add is refused 503). */
let smtp: TestSmtpServer;
let live: OrganizationFixture;
let sandbox: OrganizationFixture;
/** A signed-in browser of the live organization, and one of its sandbox (where the sandbox's own forms are reached). */
const sessions: Record<"live" | "sandbox", TestSession> = {} as Record<"live" | "sandbox", TestSession>;
/** Which organization's browser sends a request: mostly the live one. */
const browser = fc.constantFrom("live", "live", "live", "sandbox") as fc.Arbitrary<"live" | "sandbox">;
/** Ids of the organization's own records (endpoints, deliveries, a key the CLI does not use), so paths and fields reach real rows too. */
let recordIds: string[];
/** The path parameters' own records: by the route's first segment (`/webhooks/:id`) or the parameter's name. */
let ownIds: Readonly<Record<string, ReadonlyArray<string>>>;

beforeAll(async () => {
  // Limits far out of the way, so that random input reaches the handlers rather than a 429 (the limits have tests of their own).
  smtp = await startTestSmtpServer();
  area = await startArea(inject("pgAdminUrl"), "'self'", {
    limits: { ...DEFAULT_DEVELOPER_AREA_LIMITS, testEvents: 10_000, endpointCreates: 10_000, replays: 10_000 },
    rateLimits: UNTHROTTLED,
    mailServer: { smtpUrl: smtp.url, from: "alerts@platter.test" },
  });
  live = await createOrganization(area.db, "Fuzzed Catering");
  sandbox = await createSandbox(area.db, live);
  await area.db.run(Seeding.deliveryLog(live.scope, { deliveries: 12, endpoints: 2 }));
  const rows = <Row>(statement: string, params: unknown[]) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
  const deliveries = await rows<{ id: string; endpoint_id: string; envelope_id: string }>(
    `select d.id, d.endpoint_id, m.envelope_id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
     where d.organization_id = ? order by d.id limit 6`,
    [live.id],
  );
  recordIds = [...new Set([...deliveries.flatMap((row) => [row.id, row.endpoint_id]), String(live.readKeyId)])]
    // The keys the /cli/ routes are sent with stay live: a random revoke must not turn them into 401s.
    .filter((id) => id !== String(live.writeKeyId));
  ownIds = {
    webhooks: deliveries.map((row) => row.endpoint_id),
    delivery: deliveries.map((row) => row.id),
    deliveries: deliveries.map((row) => row.envelope_id),
    "api-keys": [String(live.readKeyId)],
  };
  sessions.live = await signIn(area, await area.link(live.id));
  sessions.sandbox = await signIn(area, await area.link(sandbox.id));
});
afterAll(async () => {
  await area?.stop();
  await smtp?.close();
});

/** Strings that have broken parsers, Unicode and database layers before. */
const nastyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom(
    "", " ", "\u0000", "a\u0000b", "\ud800", "\ufeff", "💩", "null", "NaN", "Infinity", "-1", "0", "1e400", "1.5", "' or 1=1 --", "%", "%00",
    "a".repeat(3_000), "9".repeat(40), "9007199254740993", "-9223372036854775809", "2147483648",
  ),
);

const pad = (value: number, width: number) => String(value).padStart(width, "0");

/** Times and days with every part at and past its edges: years 0 to 99999, month 0 to 13, hour 0 to 25. */
const edgyTime = fc
  .record({
    year: fc.oneof(fc.integer({ min: 0, max: 99_999 }), fc.constantFrom(0, 1, 1899, 1900, 1969, 1970, 2026, 9998, 9999, 10_000), fc.constantFrom(0, 9999)),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    shape: fc.constantFrom("day", "minute", "second", "millis", "offset", "signed"),
  })
  .map(({ year, month, day, hour, minute, shape }) => {
    const date = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
    const time = `${date}T${pad(hour, 2)}:${pad(minute, 2)}`;
    switch (shape) {
      case "day": return date;
      case "minute": return time;
      case "second": return `${time}:59`;
      case "millis": return `${time}:59.999Z`;
      case "offset": return `${time}+14:00`;
      case "signed": return `+${pad(year, 6)}-01-01T00:00`;
    }
  });

/** Numbers at the edges of every integer column and of JavaScript's doubles. */
const edgyNumber = fc.oneof(
  fc.integer(),
  fc.double().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, 2 ** 63, 1e21, 5e-324),
).map(String);

const anyValue = fc.oneof(nastyString, edgyTime, edgyNumber, fc.constantFrom(...WEBHOOK_EVENT_TYPES));

/** One of the organization's own record ids (read once the records exist). */
const ownRecordId = fc.constant(undefined).chain(() => fc.constantFrom(...recordIds));

/** Query and form field names the area reads, by what their values are: times and days, ids and counts, and the rest. */
const TIME_FIELDS = ["from", "to", "since"];
const NUMBER_FIELDS = ["endpoint", "key", "delivery", "revoked", "replayed", "ended", "limit", "created", "reset"];
const OTHER_FIELDS = [
  "status", "type", "route", "request", "cursor", "action", "actor", "done", "triggered", "forward_to", "events", "name", "access", "expires",
  "overlap", "url", "choice", ...WEBHOOK_EVENT_TYPES.map((type) => `type:${type}`),
];

/** Values that pass the first checks, so handlers get past them with the rest random. */
const plausibleValue = fc.constantFrom(
  "read", "read_write", "never", "30d", "0", "1h", "all", "https://203.0.113.10/hook", "http://localhost:4000/hook", "failed", "4xx",
  "/v1/events", "session", "api_key.created", "2026-11-24", "2026-11-24T10:00", "on", "1", ...WEBHOOK_EVENT_TYPES,
);

/** Percent-encodes every byte (of `text` as UTF-8, a lone surrogate as U+FFFD; or raw bytes, not always UTF-8). */
const percentEncoded = (bytes: Uint8Array) => [...bytes].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
const encoded = (text: fc.Arbitrary<string>) => text.map((value) => percentEncoded(Buffer.from(value, "utf8")));

/** Anything in a query or form: random text, raw bytes, broken escapes. */
const encodedPart = fc.oneof(
  { weight: 6, arbitrary: encoded(fc.oneof(anyValue, plausibleValue)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 12 }).map(percentEncoded) },
  { weight: 1, arbitrary: fc.constantFrom("%", "%zz", "%E2%82", "+", "&", "=", "%C0%80") },
);

/** One `name=value` pair: a field the area reads with a value of its kind (mostly) or anything, or a field it does not read. */
const fieldPair = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...TIME_FIELDS), fc.oneof({ weight: 3, arbitrary: encoded(edgyTime) }, { weight: 1, arbitrary: encodedPart })) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom(...NUMBER_FIELDS), fc.oneof(
      { weight: 2, arbitrary: encoded(edgyNumber) }, { weight: 2, arbitrary: ownRecordId }, { weight: 1, arbitrary: encodedPart },
    )),
  },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...OTHER_FIELDS).map(encodeURIComponent), fc.oneof(encoded(plausibleValue), encodedPart)) },
  { weight: 1, arbitrary: fc.tuple(encodedPart, encodedPart) },
);

/** A query string or urlencoded body: fields the area reads (some repeated) and others. */
const fieldsText = fc.array(fieldPair, { maxLength: 6 }).map((pairs) => pairs.map(([name, value]) => `${name}=${value}`).join("&"));

/** A path parameter `name` of a route under `/section/`: one of the organization's own records of it, or anything. */
const pathValue = (section: string, name: string) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined).chain(() => fc.constantFrom(...(ownIds[name] ?? ownIds[section] ?? recordIds))) },
    { weight: 2, arbitrary: encodedPart.filter((part) => part !== "") },
    { weight: 1, arbitrary: edgyNumber },
  );

/** The route's path with each `:param` filled in. */
const filledPath = (pattern: string) => {
  const section = pattern.split("/")[1] ?? "";
  const names = [...pattern.matchAll(/:(\w+)/g)].map((match) => match[1]!);
  return fc.tuple(...names.map((name) => pathValue(section, name))).map((values) =>
    names.reduce((path, name, index) => path.replace(`:${name}`, values[index]!), pattern));
};

/** After an answer that set the session cookie (signed out, a session ended, a switch): a fresh session of that browser's organization. */
const keepSignedIn = async (response: Response, whose: "live" | "sandbox") => {
  if (!(response.headers.get("set-cookie") ?? "").includes(SESSION_COOKIE)) return;
  sessions[whose] = await signIn(area, await area.link(whose === "live" ? live.id : sandbox.id));
};

/** Checks an answer of the area's pages: an expected status, and a page or a redirect within the area. */
const expectAreaAnswer = async (response: Response, label: string, whose: "live" | "sandbox") => {
  const body = await response.text();
  expect(AREA_STATUSES, `${label} answered ${response.status}`).toContain(response.status);
  // A page is HTML; the one document the area serves (the API's OpenAPI JSON) is the exception.
  const document = response.status === 200 && new URL(response.url).pathname.endsWith(".json");
  expect(response.headers.get("content-type"), label).toBe(document ? "application/json; charset=utf-8" : "text/html; charset=utf-8");
  const shown = response.status === 303 ? response.headers.get("location")?.startsWith("/") : document ? body.startsWith("{") : body.startsWith("<!doctype html>");
  expect(shown, label).toBe(true);
  await keepSignedIn(response, whose);
};

const sendsAll = <A>(arbitrary: fc.Arbitrary<A>, runs: number, send: (value: A) => Promise<void>) =>
  fc.assert(fc.asyncProperty(arbitrary, send), { numRuns: runs, endOnFailure: true });

describe("the router's routes", () => {
  it("are every page, form and CLI route, each sent random input below", () => {
    const paths = area.routes.map((route) => `${route.method} ${route.path}`);
    expect(paths).toEqual(expect.arrayContaining([
      "GET /deliveries", "GET /requests", "GET /audit-log", "POST /deliveries/replay-failed", "POST /api-keys", "GET /cli/listen", "POST /cli/trigger",
      "POST /cli/listen/attempts", "POST /webhooks/:id/test", "POST /sandbox/trigger",
    ]));
    expect(area.routes.every((route) => route.method === "GET" || route.method === "POST")).toBe(true);
  });
});

describe("random input, signed in", () => {
  it("to every GET page (random query strings and path values) is answered a page or a redirect, never a 5xx", async () => {
    const pages = area.routes.filter((route) => route.method === "GET" && !route.path.startsWith("/cli/"));
    expect(pages.length).toBeGreaterThan(15);
    for (const route of pages) {
      await sendsAll(fc.tuple(filledPath(route.path), fieldsText, browser), RUNS.page, async ([path, query, whose]) => {
        const response = await fetch(`${area.origin}${path}?${query}`, { headers: { cookie: sessions[whose].cookie }, redirect: "manual" });
        await expectAreaAnswer(response, `GET ${path}?${query} (${whose})`, whose);
      });
    }
  });

  it("to every POST form (random fields, with and without its token and Origin) is answered a page or a redirect, never a 5xx", async () => {
    const forms = area.routes.filter((route) => route.method === "POST" && !route.path.startsWith("/cli/"));
    expect(forms.length).toBeGreaterThan(15);
    // Mostly as the area's own page sends it (so the handler is reached), sometimes tampered with.
    const asSent = { token: "valid", origin: "own", type: "application/x-www-form-urlencoded", oversized: false } as const;
    const sending = fc.oneof(
      { weight: 4, arbitrary: fc.constant(asSent) },
      {
        weight: 1,
        arbitrary: fc.record({
          token: fc.constantFrom("valid", "missing", "wrong"),
          origin: fc.constantFrom("own", "none", "other"),
          type: fc.constantFrom("application/x-www-form-urlencoded", "application/json", ""),
          oversized: fc.boolean(),
        }),
      },
    );
    for (const route of forms) {
      await sendsAll(fc.tuple(filledPath(route.path), fieldsText, sending, browser), RUNS.form, async ([path, fields, how, whose]) => {
        const session = sessions[whose];
        const token = how.token === "valid" ? `form_token=${encodeURIComponent(session.formToken)}&` : how.token === "wrong" ? "form_token=x&" : "";
        const body = `${token}${fields}${how.oversized ? `&pad=${"a".repeat(20_000)}` : ""}`;
        const response = await fetch(`${area.origin}${path}`, {
          method: "POST",
          redirect: "manual",
          headers: {
            cookie: session.cookie,
            ...(how.type === "" ? {} : { "content-type": how.type }),
            ...(how.origin === "own" ? { origin: area.origin } : how.origin === "other" ? { origin: "https://evil.example" } : {}),
          },
          body,
        });
        await expectAreaAnswer(response, `POST ${path} ${JSON.stringify(how)} ${fields} (${whose})`, whose);
      });
    }
  });
});

describe("random input with an API key", () => {
  const KEYS = ["sandbox", "sandbox", "sandbox", "sandbox", "sandbox", "live", "read", "none", "garbage"] as const;
  const keyOf = (which: (typeof KEYS)[number]): Record<string, string> => {
    switch (which) {
      case "sandbox": return { authorization: `Bearer ${sandbox.writeKey}` };
      case "live": return { authorization: `Bearer ${live.writeKey}` };
      case "read": return { authorization: `Bearer ${sandbox.readKey}` };
      case "garbage": return { authorization: "Bearer platter_test_nope" };
      case "none": return {};
    }
  };

  /** Checks a `/cli/` answer: an expected status, and JSON (`{"error": …}` for a refusal), or the event stream of `GET /cli/listen`. */
  const expectCliAnswer = async (response: Response, label: string, stream?: AbortController) => {
    expect(CLI_STATUSES, `${label} answered ${response.status}`).toContain(response.status);
    if (response.headers.get("content-type") === "text/event-stream; charset=utf-8") {
      expect([label, response.status]).toEqual([label, 200]);
      stream?.abort();
      return;
    }
    expect(response.headers.get("content-type"), label).toBe("application/json; charset=utf-8");
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status < 400 || typeof body["error"] === "string", `${label}: ${JSON.stringify(body)}`).toBe(true);
  };

  const REPORT_FIELDS = ["delivery_id", "lease_token", "status_code", "duration_ms", "error", "response_body", "type"];
  const jsonValue = fc.oneof(
    anyValue,
    edgyNumber.map(Number),
    fc.double(),
    fc.integer(),
    fc.constant(null),
    fc.boolean(),
    fc.uuid(),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const body = fc.oneof(
    { weight: 3, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...REPORT_FIELDS), fc.string()), jsonValue, { maxKeys: 7 }).map((object) => JSON.stringify(object)) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 60 }) },
    { weight: 2, arbitrary: fc.record({ type: fc.oneof(fc.constantFrom(...WEBHOOK_EVENT_TYPES), anyValue) }).map((object) => JSON.stringify(object)) },
    {
      weight: 2,
      arbitrary: fc.record({
        delivery_id: fc.oneof(fc.integer({ min: 1, max: 100 }), edgyNumber.map(Number)),
        lease_token: fc.oneof(fc.uuid(), nastyString),
        status_code: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 1000 })),
        duration_ms: fc.oneof(fc.integer({ min: -1, max: 4_000_000 }), fc.double()),
        error: fc.oneof(fc.constant(null), nastyString),
        response_body: fc.oneof(fc.constant(null), nastyString),
      }, { requiredKeys: ["delivery_id", "lease_token", "status_code", "duration_ms"] }).map((object) => JSON.stringify(object)),
    },
    { weight: 1, arbitrary: fc.stringMatching(/^\{"(delivery_id|duration_ms|status_code)":-?\d{1,40}(\.\d{1,20})?(e[+-]?\d{1,4})?\}$/) },
  );

  it("to every POST /cli/ route (random bodies and content types) is answered JSON with an expected status, never a 5xx", async () => {
    const routes = area.routes.filter((route) => route.method === "POST" && route.path.startsWith("/cli/"));
    expect(routes.length).toBeGreaterThanOrEqual(2);
    const sending = fc.record({
      key: fc.constantFrom(...KEYS),
      type: fc.constantFrom("application/json", "application/json", "application/json", "application/json; charset=utf-8", "text/plain", ""),
    });
    for (const route of routes) {
      await sendsAll(fc.tuple(filledPath(route.path), body, sending), RUNS.cli, async ([path, text, how]) => {
        const response = await fetch(`${area.origin}${path}`, {
          method: "POST",
          headers: { ...keyOf(how.key), ...(how.type === "" ? {} : { "content-type": how.type }) },
          body: text,
        });
        await expectCliAnswer(response, `POST ${path} ${JSON.stringify(how)} ${text}`);
      });
    }
  });

  it("to every GET /cli/ route (random query strings) is answered JSON or its stream, never a 5xx", async () => {
    const routes = area.routes.filter((route) => route.method === "GET" && route.path.startsWith("/cli/"));
    expect(routes.length).toBeGreaterThanOrEqual(1);
    for (const route of routes) {
      // `platter listen`'s one required field, mostly a URL it takes, so the stream opens too.
      const forwardTo = fc.option(encoded(fc.oneof(fc.constantFrom("http://localhost:4000/hook", "https://203.0.113.10/x"), nastyString)), { freq: 5 });
      const query = fc.tuple(forwardTo, fieldsText).map(([to, rest]) => (to === null ? rest : `forward_to=${to}&${rest}`));
      await sendsAll(fc.tuple(filledPath(route.path), query, fc.constantFrom(...KEYS)), RUNS.cli, async ([path, query, key]) => {
        const stream = new AbortController();
        const response = await fetch(`${area.origin}${path}?${query}`, { headers: keyOf(key), signal: stream.signal });
        await expectCliAnswer(response, `GET ${path}?${query} (${key})`, stream);
      });
    }
  });
});
