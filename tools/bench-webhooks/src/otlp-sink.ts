import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A collector stand-in on 127.0.0.1 for the tracing-on rows (BENCH_WEBHOOK_TRACES=1): answers every
 * OTLP export 200 at once and counts them, so the dispatcher pays for making and sending its spans
 * and nothing else.
 */
export const startOtlpSink = async () => {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => (bytes += chunk.length));
    req.on("end", () => {
      exports++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    /** OTEL_EXPORTER_OTLP_ENDPOINT for a process exporting here. */
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats: () => ({ exports, bytes }),
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
};
