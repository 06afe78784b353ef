import { type Server, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";

/**
 * Answers from below Koa, in the API's own words: what Node's HTTP parser refuses before a request
 * exists (headers too large, a malformed request) and methods it hands over as tunnels (CONNECT)
 * get the same `{"error": …}` JSON as everything else, then the connection is closed, since
 * nothing more can be read from it reliably.
 */

/** Largest request head Node accepts (its default `maxHeaderSize`). */
export const HEADER_LIMIT_BYTES = 16 * 1024;

/** Writes the answer and closes; an answer to HEAD is its status and headers only, as HTTP wants. */
const rawAnswer = (socket: Duplex, status: number, error: string, isHead = false): void => {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ error });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      "content-type: application/json; charset=utf-8\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      "connection: close\r\n\r\n" +
      (isHead ? "" : body),
  );
};

/**
 * Whether the request the parser gave up on is a HEAD, read from the bytes it was reading: its
 * head starts after the last blank line before the failure (or at the start of the read). When
 * the head began in an earlier read, its method is out of sight and it is answered like a GET.
 */
const failedOnHead = (error: { rawPacket?: unknown; bytesParsed?: unknown }): boolean => {
  if (!Buffer.isBuffer(error.rawPacket)) return false;
  const parsed = typeof error.bytesParsed === "number" ? error.bytesParsed : error.rawPacket.length;
  const read = error.rawPacket.subarray(0, parsed);
  const blank = read.lastIndexOf("\r\n\r\n");
  const start = blank === -1 ? 0 : blank + 4;
  return read.subarray(start, start + 5).toString("latin1") === "HEAD ";
};

/** What a parser error means for the client. */
const parserAnswer = (code: string | undefined): { status: number; error: string } => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return { status: 431, error: `Request headers must be at most ${HEADER_LIMIT_BYTES} bytes` };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, error: "The request was not received in time" };
    default:
      return { status: 400, error: "Malformed HTTP request" };
  }
};

/** Makes `server` answer what its parser refuses, and CONNECT, in the API's JSON (HEAD without a body). */
export const answerBelowKoa = (server: Server): void => {
  server.on("clientError", (error: NodeJS.ErrnoException & { rawPacket?: unknown; bytesParsed?: unknown }, socket: Duplex) => {
    // A connection the client reset or that already failed has no one left to answer.
    if (error.code === "ECONNRESET" || (socket as { destroyed?: boolean }).destroyed) return void socket.destroy();
    const { status, error: text } = parserAnswer(error.code);
    rawAnswer(socket, status, text, failedOnHead(error));
  });
  // CONNECT is not one of the API's methods: the same answer as any other unknown method.
  server.on("connect", (_request, socket: Duplex) => rawAnswer(socket, 404, "Unknown endpoint"));
};
