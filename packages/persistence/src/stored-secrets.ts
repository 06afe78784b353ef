import { randomUUID } from "node:crypto";
import { chmod, link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  endpointSecretContext, generateSecretKey, parseSecretKeys, type SecretCipher, SecretUnreadable, type SecretKey, sealedKeyId,
  sessionSecretContext,
} from "@platter/domain";

/**
 * The secrets stored sealed (domain's secret-sealing.ts), as a whole: sealing what is still in
 * clear (every start, after the migrations, under their lock: a database from before sealing
 * is sealed before anything reads it), re-sealing with the current key (`platter secrets
 * reencrypt`), and refusing to start on a keyring that cannot open what is stored.
 */

/** Runs one statement (`?` placeholders) in the sealing's transaction. */
export type StatementRunner = <Row>(text: string, params: ReadonlyArray<unknown>) => Promise<Row[]>;

/** How many stored secrets a pass sealed (or re-sealed), by what they are. */
export interface SealedCounts {
  /** Endpoints' (and listeners') current and previous signing secrets. */
  readonly endpointSecrets: number;
  /** Developer-area sessions' form secrets. */
  readonly sessionFormSecrets: number;
}

/** A stored secret column, how to name its row, and which rows hold one. */
interface SecretColumn {
  readonly table: "webhook_endpoints" | "developer_sessions";
  readonly column: "secret" | "previous_secret" | "form_secret";
  /** The row's identity columns (besides `organization_id`) and its sealing context. */
  readonly identity: string;
  readonly context: (row: { organization_id: string; identity: string }) => string;
}

const SECRET_COLUMNS: ReadonlyArray<SecretColumn> = [
  { table: "webhook_endpoints", column: "secret", identity: "id::text", context: (row) => endpointSecretContext(row.organization_id, row.identity) },
  { table: "webhook_endpoints", column: "previous_secret", identity: "id::text", context: (row) => endpointSecretContext(row.organization_id, row.identity) },
  { table: "developer_sessions", column: "form_secret", identity: "token_hash", context: (row) => sessionSecretContext(row.organization_id, row.identity) },
];

/** Rows handled per statement pair. */
const BATCH = 500;

/**
 * Checks that `cipher` opens what is stored (for each key id found, one value opened: the right
 * key, not just its id), then seals every value still in clear and, with `reseal`, re-seals every
 * value sealed with another key than the current one. Throws `SecretUnreadable` (with what to do)
 * when a key is missing or wrong. Run in one transaction under the migrations' lock.
 */
export const sealStoredSecrets = async (run: StatementRunner, cipher: SecretCipher, reseal: boolean): Promise<SealedCounts> => {
  const counts = { webhook_endpoints: 0, developer_sessions: 0 };
  for (const spec of SECRET_COLUMNS) {
    const keyed = await run<{ key_id: string; organization_id: string; identity: string; value: string }>(
      `select distinct on (split_part(${spec.column}, ':', 2)) split_part(${spec.column}, ':', 2) as key_id,
         organization_id::text as organization_id, ${spec.identity} as identity, ${spec.column} as value
       from ${spec.table} where ${spec.column} like 'v1:%'`,
      [],
    );
    for (const row of keyed) {
      try {
        cipher.open(row.value, spec.context(row));
      } catch (error) {
        const reason = error instanceof SecretUnreadable ? error.message : String(error);
        throw new SecretUnreadable(
          `${spec.table}.${spec.column} holds secrets sealed with key "${row.key_id}" that SECRET_ENCRYPTION_KEYS cannot open (${reason}); ` +
            "give the key they were sealed with (the current one first), as the processes writing them had it",
        );
      }
    }
    let lastIdentity = "";
    for (;;) {
      const rows = await run<{ organization_id: string; identity: string; value: string }>(
        `select organization_id::text as organization_id, ${spec.identity} as identity, ${spec.column} as value from ${spec.table}
         where ${spec.column} is not null and ${spec.identity} > ? and (${spec.column} not like 'v1:%' or (? and split_part(${spec.column}, ':', 2) <> ?))
         order by ${spec.identity} limit ${BATCH} for update`,
        [lastIdentity, reseal, cipher.currentKeyId],
      );
      if (rows.length === 0) break;
      lastIdentity = rows[rows.length - 1]!.identity;
      const sealed = rows.map((row) => {
        const context = spec.context(row);
        const plain = sealedKeyId(row.value) === undefined ? row.value : cipher.open(row.value, context);
        return { identity: row.identity, value: cipher.seal(plain, context) };
      });
      await run(
        `update ${spec.table} t set ${spec.column} = v.value
         from jsonb_to_recordset(?::jsonb) as v(identity text, value text) where t.${spec.identity.replace("::text", "")}::text = v.identity`,
        // Bound as JSON text: the driver would spread an array into a list of parameters.
        [JSON.stringify(sealed)],
      );
      counts[spec.table] += rows.length;
      // Text order of ids: "10" < "9"; every row of a batch is past the last one's text, so none is seen twice.
    }
  }
  return { endpointSecrets: counts.webhook_endpoints, sessionFormSecrets: counts.developer_sessions };
};

/** Where the embedded database's key is kept: beside its data, made on first use. */
export const LOCAL_SECRET_KEYS_FILE = "secret-encryption-keys";

/**
 * The keyring of the embedded database under `dataDir`: read from its key file, or made (one
 * random key, the file readable by this user only) when there is none, so a restart opens what the
 * last run sealed. `SECRET_ENCRYPTION_KEYS`, when set, is used instead.
 */
export const localSecretKeys = async (dataDir: string): Promise<{ readonly keys: ReadonlyArray<SecretKey>; readonly created: boolean }> => {
  const file = join(dataDir, LOCAL_SECRET_KEYS_FILE);
  const existing = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (existing !== undefined) {
    const keys = parseSecretKeys(existing.trim());
    if (typeof keys === "string") throw new SecretUnreadable(`${file} ${keys}`);
    return { keys, created: false };
  }
  await mkdir(dataDir, { recursive: true });
  const { key, text } = generateSecretKey("local");
  // Written whole to a file of its own, then linked into place: a process starting at the same time
  // never reads a half-written key, and of two, the loser (EEXIST) reads the winner's.
  const draft = `${file}.${process.pid}.${randomUUID()}`;
  await writeFile(draft, `${text}\n`, { mode: 0o600, flag: "wx" });
  try {
    await chmod(draft, 0o600);
    const linked = await link(draft, file).then(() => true, (error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return false;
      throw error;
    });
    if (!linked) return localSecretKeys(dataDir);
  } finally {
    await unlink(draft).catch(() => {});
  }
  return { keys: [key], created: true };
};
