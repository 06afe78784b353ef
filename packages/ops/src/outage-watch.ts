/**
 * Says once that a dependency went away and once that it is back, however many failures the
 * outage causes meanwhile: the first `down` reports and starts probing; the first probe that
 * succeeds reports the recovery. Probe timers never keep a process alive.
 */
export interface OutageWatch {
  /** A failure caused by the outage; only the first of an outage is reported. */
  readonly down: (reason: unknown) => void;
  /** Whether an outage is going on. */
  readonly isDown: () => boolean;
}

export interface OutageWatchOptions {
  /** Resolves when the dependency answers again. */
  readonly probe: () => Promise<unknown>;
  readonly onDown: (reason: unknown) => void;
  readonly onUp: (downForMs: number) => void;
  readonly probeEveryMs?: number;
}

export const watchOutages = ({ probe, onDown, onUp, probeEveryMs = 500 }: OutageWatchOptions): OutageWatch => {
  let since: number | undefined;
  const check = async () => {
    const back = await probe().then(() => true, () => false);
    if (back) {
      const downFor = Date.now() - since!;
      since = undefined;
      onUp(downFor);
    } else {
      setTimeout(() => void check(), probeEveryMs).unref();
    }
  };
  return {
    down: (reason) => {
      if (since !== undefined) return;
      since = Date.now();
      onDown(reason);
      setTimeout(() => void check(), probeEveryMs).unref();
    },
    isDown: () => since !== undefined,
  };
};
