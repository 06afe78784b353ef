import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** A real SMTP server a test runs on 127.0.0.1 (`smtp-server`), keeping each mail as `mailparser` reads it. */
export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>`, for `SMTP_URL`. */
  readonly url: string;
  /** Every mail taken, in order of arrival. */
  readonly received: ReadonlyArray<ParsedMail>;
  /** How many mails' data began to arrive (a stalling server takes data and never answers). */
  readonly dataStarted: () => number;
  /** The mails taken for `address` (a single `To`). */
  readonly to: (address: string) => ReadonlyArray<ParsedMail>;
  readonly close: () => Promise<void>;
}

/**
 * Starts a real SMTP server on 127.0.0.1 (no TLS, no AUTH) keeping what arrives; with `stall`, it
 * takes each mail's data and never answers it (a relay that dies mid-dialogue).
 */
export const startTestSmtpServer = async ({ stall = false }: { readonly stall?: boolean } = {}): Promise<TestSmtpServer> => {
  const received: ParsedMail[] = [];
  let dataStarted = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData: (stream, _session, callback) => {
      dataStarted++;
      if (stall) {
        stream.resume();
        return;
      }
      simpleParser(stream).then((mail) => {
        received.push(mail);
        callback();
      }, callback);
    },
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    dataStarted: () => dataStarted,
    to: (address) => received.filter((mail) => mail.to !== undefined && !Array.isArray(mail.to) && mail.to.text === address),
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
};
