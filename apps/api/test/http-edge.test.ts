import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";

/**
 * Every answer is a clean one, whatever layer gives it: what Node's parser refuses and CONNECT
 * get JSON too, and a refused oversized body never leaves a connection that loses the next request.
 */

let api: ApiUnderTest;
let port: number;

beforeAll(async () => {
  api = await startApiUnderTest();
  port = Number(new URL(api.baseUrl).port);
});
afterAll(() => api?.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** Whether the server closed the connection after answering. */
  closed: boolean;
}

/** Writes `request` on a fresh connection and reads one answer until the server closes (or 5 s pass). */
const rawExchange = (request: string | Buffer): Promise<RawAnswer> =>
  new Promise((done, fail) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => finish(false), 5000);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", body = ""] = text.split("\r\n\r\n");
      const [statusLine = "", ...headerLines] = head.split("\r\n");
      const status = Number(statusLine.split(" ")[1]);
      if (!Number.isInteger(status)) return fail(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      done({ status, headers, body: JSON.parse(body), closed });
    };
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => finish(true));
    socket.on("error", () => finish(true));
    socket.write(request);
  });

describe("answers below Koa", () => {
  it("answers request headers over 16 KiB with 431 JSON", async () => {
    const answer = await rawExchange(`GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatchObject({ status: 431, body: { error: "Request headers must be at most 16384 bytes" }, closed: true });
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
  });

  it.each([
    ["a malformed request line", "GARBAGE\r\n\r\n"],
    ["a bad header line", "GET /v1/me HTTP/1.1\r\nHost x\r\n\r\n"],
    ["a broken chunked body", "POST /v1/clients HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"],
  ])("answers %s with 400 JSON", async (_, request) => {
    const answer = await rawExchange(request);
    expect(answer).toMatchObject({ status: 400, body: { error: "Malformed HTTP request" }, closed: true });
  });

  it("answers CONNECT like any method the API does not serve: 404 Unknown endpoint", async () => {
    const answer = await rawExchange("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    expect(answer).toMatchObject({ status: 404, body: { error: "Unknown endpoint" }, closed: true });
  });
});

/** Everything the server sends back for `request` on a fresh connection, until it closes (or 5 s pass: then `closed` is false). */
const rawText = (request: string): Promise<{ text: string; closed: boolean }> =>
  new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => finish(false), 5000);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      done({ text: Buffer.concat(chunks).toString("utf8"), closed });
    };
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => finish(true));
    socket.on("error", () => finish(true));
    socket.write(request);
  });

describe("HEAD refused by the parser", () => {
  const big = "a".repeat(20_000);
  it.each([
    ["headers over 16 KiB", `HEAD /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`],
    ["a request line over 16 KiB", `HEAD /v1/${big} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ["headers over 16 KiB, after a first request on the connection", `GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\nHEAD /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`],
  ])("answers a HEAD with %s with 431: status and headers, no body", async (_, request) => {
    const { text, closed } = await rawText(request);
    expect(closed).toBe(true);
    const answer = text.slice(text.indexOf("HTTP/1.1 431 "));
    expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(answer).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/);
    // The answer ends with its headers: nothing follows the blank line.
    expect(answer.indexOf("\r\n\r\n")).toBe(answer.length - 4);
  });

  it("still answers a GET with the same problem with its JSON body", async () => {
    const { text } = await rawText(`GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`);
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toEqual({ error: "Request headers must be at most 16384 bytes" });
  });
});

describe("a body over 1 MiB", () => {
  it("gets 413 with Connection: close, and the client's next request is always answered", async () => {
    const org = await api.newOrganization();
    for (let i = 0; i < 5; i++) {
      const refused = await api.call("POST", "/v1/clients", { key: org.writeKey, body: { name: "x".repeat(2_000_000) } });
      expect(refused.status).toBe(413);
      expect(refused.headers.get("connection")).toBe("close");
      const created = await api.call("POST", "/v1/clients", { key: org.writeKey, body: { name: `After ${i}` } });
      expect(created.status).toBe(201);
    }
  });

  it("closes the connection it was sent on, after the answer", async () => {
    const org = await api.newOrganization();
    const body = Buffer.alloc(2_000_000, "a");
    const answer = await rawExchange(Buffer.concat([
      Buffer.from(`POST /v1/clients HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.writeKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`),
      body,
    ]));
    expect(answer).toMatchObject({ status: 413, closed: true });
    expect(answer.headers["connection"]).toBe("close");
  });
});
