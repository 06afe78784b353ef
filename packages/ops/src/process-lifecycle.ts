/**
 * The life of a server process, in one place: start its services in order, wait for the first
 * SIGTERM or SIGINT (or a service that ends on its own), then stop them in reverse order, each
 * draining its own work first. A configuration error exits 2 with its message; any other start
 * failure exits 1.
 */

/** A started service: a graceful stop, and (for a child process) a promise that settles if it ends on its own. */
export interface Service {
  /** Graceful stop: stops taking work, finishes what is in flight, releases what it holds. */
  readonly stop: () => Promise<void>;
  /** Settles if the service ends without being asked to; in-process servers have none. */
  readonly ended?: Promise<unknown>;
}

export interface ServiceGroup {
  /** Starts a service and tracks it; returns it as started, so callers keep its own fields (ports). */
  readonly add: <S extends Service>(name: string, start: () => Promise<S>) => Promise<S>;
  /** Settles with the name of the first service that ended on its own; never while all keep running. */
  readonly unexpectedEnd: () => Promise<string>;
  /** Stops every started service, last started first; a failing stop is reported and the others still stop. */
  readonly stopAll: (onFailure: (name: string, error: unknown) => void) => Promise<void>;
}

export const createServiceGroup = (): ServiceGroup => {
  const running: { name: string; service: Service }[] = [];
  return {
    add: async (name, start) => {
      const service = await start();
      running.push({ name, service });
      return service;
    },
    unexpectedEnd: () =>
      Promise.race(running.flatMap(({ name, service }) => (service.ended ? [service.ended.then(() => name, () => name)] : []))),
    stopAll: async (onFailure) => {
      for (const { name, service } of running.splice(0).reverse()) {
        try {
          await service.stop();
        } catch (error) {
          onFailure(name, error);
        }
      }
    },
  };
};

/**
 * Resolves with the first SIGTERM or SIGINT. Listening starts at once, so a signal during start-up
 * is not lost; only the first is caught, so a second Ctrl+C ends the process without waiting.
 */
export const shutdownSignal = (): Promise<NodeJS.Signals> =>
  new Promise((resolve) => {
    const signals: NodeJS.Signals[] = ["SIGTERM", "SIGINT"];
    const onSignal = (signal: NodeJS.Signals) => {
      for (const other of signals) process.removeListener(other, onSignal);
      resolve(signal);
    };
    for (const signal of signals) process.on(signal, onSignal);
  });

/** Something to log the process's start and stop with. */
export type LifecycleLog = (message: string, fields?: object) => void;

/**
 * Runs a server process: `start` adds its services to the group; on the first signal they stop in
 * reverse order and the process exits 0. `isConfigError` tells configuration mistakes (exit 2)
 * from other failures (exit 1); those and `isExplained` failures (one that says all in its
 * message, such as a database that never answered) are one line on stderr, anything else its stack.
 */
export const runUntilSignalled = (
  start: (services: ServiceGroup) => Promise<LifecycleLog>,
  isConfigError: (error: unknown) => boolean,
  isExplained: (error: unknown) => boolean = () => false,
): void => {
  const signal = shutdownSignal();
  const services = createServiceGroup();
  start(services)
    .then(async (log) => {
      log("stopping", { signal: await signal });
      await services.stopAll((name, error) => log("stop failed", { service: name, err: error }));
      log("stopped");
      process.exit(0);
    })
    .catch(async (error: unknown) => {
      await services.stopAll(() => {});
      const config = isConfigError(error);
      console.error(config ? `configuration error: ${(error as Error).message}` : isExplained(error) ? (error as Error).message : error);
      process.exit(config ? 2 : 1);
    });
};
