import { randomUUID } from "node:crypto";
import { chmod, link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  endpointSecretContext, generateSecretKey, keyCheckHolds, keyCheckValue, parseSecretKeys, type SecretCipher, SecretUnreadable, type SecretKey,
  sealedKeyId, sessionSecretContext,
} from "@platter/domain";

/**
 * The secrets stored sealed (domain's secret-sealing.ts), as a whole: sealing what is still in
 * clear (every start, after the migrations, under their lock: a database from before sealing
 * is sealed before anything reads it), re-sealing with the current key in batches (`platter secrets
 * reencrypt`), and refusing to start on a keyring that is not the one that sealed: one that cannot
 * open what is stored, or a different key under a key id the database knows (`secret_key_checks`).
 */

/** Runs one statement (`?` placeholders) in the sealing's transaction. */
export type StatementRunner = <Row>(text: string, params: ReadonlyArray<unknown>) => Promise<Row[]>;

/**
 * Runs `work` in a transaction: one of its own for each batch of the re-sealing (`platter secrets
 * reencrypt`), or the start's one transaction under the migrations' lock.
 */
export type TransactionRunner = <T>(work: (run: StatementRunner) => Promise<T>) => Promise<T>;

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
  /** The row's unique key (besides `organization_id`, its identity in the sealing context), walked in its index's order, and its type. */
  readonly key: "id" | "token_hash";
  readonly keyType: "bigint" | "text";
  /** Below every key: where a walk starts. */
  readonly before: string;
  readonly context: (row: { organization_id: string; identity: string }) => string;
}

const SECRET_COLUMNS: ReadonlyArray<SecretColumn> = [
  { table: "webhook_endpoints", column: "secret", key: "id", keyType: "bigint", before: "0", context: (row) => endpointSecretContext(row.organization_id, row.identity) },
  {
    table: "webhook_endpoints", column: "previous_secret", key: "id", keyType: "bigint", before: "0",
    context: (row) => endpointSecretContext(row.organization_id, row.identity),
  },
  {
    table: "developer_sessions", column: "form_secret", key: "token_hash", keyType: "text", before: "",
    context: (row) => sessionSecretContext(row.organization_id, row.identity),
  },
];

/** Rows handled per batch (a statement pair, and for the re-sealing a short transaction of its own). */
export const SEALING_BATCH = 500;

/**
 * Refuses (`SecretUnreadable`, saying what to do) a keyring that is not the one the stored secrets
 * were sealed with: each configured key id that has a check value (`secret_key_checks`) must open
 * it, so a different key under a known id is refused even before anything is sealed with it; and for
 * each key id found in the stored values, one of them must open (databases from before the checks).
 * Then writes the check value of each configured key id that has none. In the start's transaction,
 * under the migrations' lock, so two processes never both write a first check of one id.
 */
const checkSecretKeys = async (run: StatementRunner, cipher: SecretCipher): Promise<void> => {
  const checks = new Map(
    (await run<{ key_id: string; check_value: string }>("select key_id, check_value from secret_key_checks", [])).map((row) => [row.key_id, row.check_value]),
  );
  for (const keyId of cipher.keyIds) {
    const check = checks.get(keyId);
    if (check !== undefined && !keyCheckHolds(cipher, keyId, check)) {
      throw new SecretUnreadable(
        `SECRET_ENCRYPTION_KEYS gives key "${keyId}", but this database knows another key under that id (its check value, written when ` +
          `"${keyId}" was first used, does not open with it): secrets one of them seals the other cannot open. Give "${keyId}" the key it ` +
          "had before (as the other processes have it), or give a new key a new id",
      );
    }
  }
  for (const spec of SECRET_COLUMNS) {
    const keyed = await run<{ key_id: string; organization_id: string; identity: string; value: string }>(
      `select distinct on (split_part(${spec.column}, ':', 2)) split_part(${spec.column}, ':', 2) as key_id,
         organization_id::text as organization_id, ${spec.key}::text as identity, ${spec.column} as value
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
  }
  for (const keyId of cipher.keyIds) {
    if (!checks.has(keyId)) await run("insert into secret_key_checks (key_id, check_value) values (?, ?)", [keyId, keyCheckValue(cipher, keyId)]);
  }
};

/**
 * Seals every stored value still in clear and, with `reseal`, re-seals every value sealed with
 * another key than the current one, `SEALING_BATCH` rows at a time, each batch in `inTransaction`.
 * A batch's rows are locked until it commits; a stored value says which key sealed it and any
 * configured key opens it, so a pass stopped half-way leaves every value readable, and the next
 * pass finishes it.
 */
const sealInBatches = async (inTransaction: TransactionRunner, cipher: SecretCipher, reseal: boolean): Promise<SealedCounts> => {
  const counts = { webhook_endpoints: 0, developer_sessions: 0 };
  for (const spec of SECRET_COLUMNS) {
    let after = spec.before;
    for (;;) {
      const batch = await inTransaction(async (run) => {
        const rows = await run<{ organization_id: string; identity: string; value: string }>(
          `select organization_id::text as organization_id, ${spec.key}::text as identity, ${spec.column} as value from ${spec.table}
           where ${spec.column} is not null and ${spec.key} > ?::${spec.keyType}
             and (${spec.column} not like 'v1:%' or (? and split_part(${spec.column}, ':', 2) <> ?))
           order by ${spec.key} limit ${SEALING_BATCH} for update`,
          [after, reseal, cipher.currentKeyId],
        );
        if (rows.length === 0) return undefined;
        const sealed = rows.map((row) => {
          const context = spec.context(row);
          const plain = sealedKeyId(row.value) === undefined ? row.value : cipher.open(row.value, context);
          return { identity: row.identity, value: cipher.seal(plain, context) };
        });
        await run(
          `update ${spec.table} t set ${spec.column} = v.value
           from jsonb_to_recordset(?::jsonb) as v(identity text, value text) where t.${spec.key} = v.identity::${spec.keyType}`,
          // Bound as JSON text: the driver would spread an array into a list of parameters.
          [JSON.stringify(sealed)],
        );
        return { count: rows.length, last: rows[rows.length - 1]!.identity };
      });
      if (batch === undefined) break;
      counts[spec.table] += batch.count;
      after = batch.last;
    }
  }
  return { endpointSecrets: counts.webhook_endpoints, sessionFormSecrets: counts.developer_sessions };
};

/**
 * What every start does after the migrations, in their transaction and under their lock: refuses
 * a keyring that is not the one the stored secrets were sealed with (`checkSecretKeys`), then seals
 * every value still in clear (a database from before sealing is sealed before anything reads it).
 */
export const checkKeysAndSealClearSecrets = async (run: StatementRunner, cipher: SecretCipher): Promise<SealedCounts> => {
  await checkSecretKeys(run, cipher);
  return sealInBatches((work) => work(run), cipher, false);
};

/**
 * `platter secrets reencrypt`: every stored secret sealed with another key than the current one
 * re-sealed with it (and any in clear sealed), in batches, each its own short transaction.
 */
export const resealInBatches = (inTransaction: TransactionRunner, cipher: SecretCipher): Promise<SealedCounts> =>
  sealInBatches(inTransaction, cipher, true);

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
