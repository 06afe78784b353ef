/**
 * The long-running parts `platter start` runs side by side on one database: the API now, the
 * webhook dispatcher beside it later (in process, or a child process behind the same shape).
 * They start in order and stop in reverse, each draining its own work first.
 */
export interface Service {
  /** Graceful stop: stops taking work, finishes what is in flight, releases what it holds. */
  readonly stop: () => Promise<void>;
  /** Settles if the service ends without being asked to (a child process that died); in-process servers have none. */
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
