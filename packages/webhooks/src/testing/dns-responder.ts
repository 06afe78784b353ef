import type { AddressInfo } from "node:net";
import dns2 from "dns2";

/**
 * A DNS server of a test's own on 127.0.0.1 (UDP, dns2): it answers A queries for the names it
 * knows, answers AAAA and unknown names with no records, and never answers the names it is told
 * to ignore, as a dead DNS server would. It counts the questions it got, per name and type.
 */

/** A running test DNS server. */
export interface DnsResponder {
  /** `127.0.0.1:<port>`, as WEBHOOK_DNS_SERVERS and `DnsSettings.servers` take it. */
  readonly server: string;
  /** Questions received for `name` (any type, or only `type` such as "A"). */
  readonly questions: (name: string, type?: "A" | "AAAA") => number;
  /** Every name asked about, in order of first question. */
  readonly names: () => string[];
  readonly close: () => Promise<void>;
}

/** What the server says: `answers` maps a name to its IPv4 address and TTL (s); `silent` tells which names never get a reply. */
export interface DnsResponderSetup {
  readonly answers: Readonly<Record<string, { readonly address: string; readonly ttl: number }>>;
  readonly silent: (name: string) => boolean;
}

/** Starts the server on a free UDP port of 127.0.0.1. */
export const startDnsResponder = async (setup: DnsResponderSetup): Promise<DnsResponder> => {
  const { Packet } = dns2;
  const counts = new Map<string, number>();
  const server = dns2.createUDPServer((request, send) => {
    const [question] = request.questions;
    if (question === undefined) return;
    const name = question.name.toLowerCase();
    const type = question.type === Packet.TYPE.A ? "A" : question.type === Packet.TYPE.AAAA ? "AAAA" : "other";
    counts.set(`${name} ${type}`, (counts.get(`${name} ${type}`) ?? 0) + 1);
    if (setup.silent(name)) return;
    const response = Packet.createResponseFromRequest(request);
    const known = setup.answers[name];
    if (known !== undefined && question.type === Packet.TYPE.A) {
      response.answers.push(Packet.createResourceFromQuestion(question, { ttl: known.ttl, address: known.address }));
    }
    void send(response);
  });
  await server.listen(0, "127.0.0.1");
  const { port } = server.address() as AddressInfo;
  return {
    server: `127.0.0.1:${port}`,
    questions: (name, type) =>
      type === undefined ? (counts.get(`${name} A`) ?? 0) + (counts.get(`${name} AAAA`) ?? 0) : (counts.get(`${name} ${type}`) ?? 0),
    names: () => [...new Set([...counts.keys()].map((key) => key.split(" ")[0]!))],
    close: () => new Promise((done) => server.close(() => done())),
  };
};
