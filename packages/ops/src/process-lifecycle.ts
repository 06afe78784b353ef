/**
 * The life of a server process: start it, and on the first SIGTERM or SIGINT stop it gracefully
 * and exit 0. A configuration error exits 2 with its message; any other start failure exits 1.
 */

/** A started service: something to log with and a graceful stop. */
export interface StartedService {
  readonly log: (message: string, fields?: object) => void;
  readonly stop: () => Promise<void>;
}

/** `isConfigError` tells configuration mistakes (exit 2) from other failures (exit 1). */
export const runUntilSignalled = (start: () => Promise<StartedService>, isConfigError: (error: unknown) => boolean): void => {
  start()
    .then((service) => {
      let stopping = false;
      const stop = async (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        service.log("stopping", { signal });
        await service.stop();
        service.log("stopped");
        process.exit(0);
      };
      process.on("SIGTERM", stop);
      process.on("SIGINT", stop);
    })
    .catch((error: unknown) => {
      const config = isConfigError(error);
      console.error(config ? `configuration error: ${(error as Error).message}` : error);
      process.exit(config ? 2 : 1);
    });
};
