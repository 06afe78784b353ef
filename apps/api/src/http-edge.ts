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

const rawAnswer = (socket: Duplex, status: number, error: string): void => {
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
      body,
  );
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

export const answerBelowKoa = (server: Server): void => {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection the client reset or that already failed has no one left to answer.
    if (error.code === "ECONNRESET" || (socket as { destroyed?: boolean }).destroyed) return void socket.destroy();
    const { status, error: text } = parserAnswer(error.code);
    rawAnswer(socket, status, text);
  });
  // CONNECT is not one of the API's methods: the same answer as any other unknown method.
  server.on("connect", (_request, socket: Duplex) => rawAnswer(socket, 404, "Unknown endpoint"));
};
