import { cpuUsage } from "node:process";
import { endpointSecretContext, generateSecretKey, makeSecretCipher } from "@platter/domain";
import { openedSecrets } from "@platter/persistence/dispatcher";

/**
 * What opening sealed signing secrets adds to the dispatcher's CPU per delivery: each claimed
 * delivery's secret goes through `openedSecrets` (a cache hit for every delivery of an endpoint but
 * its first per stored value); a cold open is AES-256-GCM with its tag check. Measured as process
 * CPU (user + system) over many calls, so another engineer's load on the machine shows in the wall
 * clock, not here. Run beside `npm run bench:webhooks` and compare with its "worker µs" per delivery:
 * `node --conditions=@platter/source tools/bench-webhooks/src/secret-opening.ts`.
 */

const CALLS = Number(process.env["BENCH_SECRET_OPENS"] || 200_000);
const ENDPOINTS = 50;
const cipher = makeSecretCipher([generateSecretKey("bench").key]);
const stored = Array.from({ length: ENDPOINTS }, (_, i) => ({
  context: endpointSecretContext(1, i + 1),
  value: cipher.seal(`whsec_${Buffer.alloc(32, i).toString("base64")}`, endpointSecretContext(1, i + 1)),
}));

/** CPU µs per call of `open` over `CALLS` calls, round robin over the endpoints. */
const cpuPerCall = (open: (value: string, context: string) => string): number => {
  for (let i = 0; i < 10_000; i++) open(stored[i % ENDPOINTS]!.value, stored[i % ENDPOINTS]!.context); // warm-up
  const before = cpuUsage();
  let length = 0;
  for (let i = 0; i < CALLS; i++) length += open(stored[i % ENDPOINTS]!.value, stored[i % ENDPOINTS]!.context).length;
  const used = cpuUsage(before);
  if (length === 0) throw new Error("nothing opened");
  return (used.user + used.system) / CALLS;
};

const cold = cpuPerCall(cipher.open);
const cache = openedSecrets(cipher);
const cached = cpuPerCall(cache.open);
console.log(`secret opening, CPU per call over ${CALLS.toLocaleString("en")} calls: cold (AES-256-GCM) ${cold.toFixed(2)} µs, ` +
  `cached ${cached.toFixed(3)} µs (${(cold / cached).toFixed(0)}× less)`);
