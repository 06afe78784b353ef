import pg from "pg";

/**
 * Wakes a dispatcher's loops when their work commits, on one connection of its own: deliveries
 * (LISTEN platter_deliveries; the process that wrote them NOTIFYs once they commit, `deliveryWaker`) and endpoint notices, the
 * alert mailer's work (LISTEN platter_notices; a trigger on endpoint_notices). NOTIFYs are sent once
 * per transaction and channel. A dropped connection is re-established, and every loop woken once it
 * is (catching up on what committed meanwhile); polling covers the gap meanwhile.
 */
export interface DeliveryListener {
  /** Whether it listens at all (false behind a transaction pooler without a LISTEN URL: poll). */
  readonly listening: boolean;
  readonly close: () => Promise<void>;
}

/** What each channel wakes: the delivery loop on new deliveries, and optionally the alert mailer on new notices. */
export interface DispatcherWakers {
  readonly deliveries: () => void;
  readonly notices?: () => void;
}

/** The channel each waker listens on (`DELIVERIES_NOTIFY`'s, and the notices trigger's `pg_notify`). */
const CHANNELS: Readonly<Record<keyof DispatcherWakers, string>> = { deliveries: "platter_deliveries", notices: "platter_notices" };

/**
 * The NOTIFY that wakes dispatchers for new deliveries, sent after the deliveries' transaction has
 * committed and in a transaction of its own that does not wait for its commit to be flushed. Not in
 * the writing transaction: PostgreSQL holds one lock per database from a notifying transaction's
 * commit until its flush, so every create's commit would wait in line behind every other's (no
 * group commit: 1,890 → 409 transactions a second measured here, `docs/performance.md`).
 */
export const DELIVERIES_NOTIFY = "select set_config('synchronous_commit', 'off', true), pg_notify('platter_deliveries', '')";

/** Tries of one NOTIFY, and the pause before each try again (a pooled connection the server closed fails once). */
const NOTIFY_TRIES = 3;
const NOTIFY_RETRY_MS = 200;

/**
 * A process's wake-up for dispatchers, coalesced: one NOTIFY in flight at a time, and all the wakes
 * asked while it is in flight answered by one more after it. So a burst of creates, whatever its
 * organizations, sends a handful of NOTIFYs, and never one that comes before its deliveries commit.
 * A NOTIFY that fails is tried again twice, 200 ms apart; after that the dispatchers' poll finds the deliveries
 * (and a dispatcher that lost its own connection wakes itself once it listens again).
 */
export const deliveryWaker = (notify: () => Promise<unknown>): (() => void) => {
  let sending = false;
  let again = false;
  const sendOnce = async () => {
    for (let tries = 1; ; tries++) {
      try {
        return void (await notify());
      } catch {
        if (tries >= NOTIFY_TRIES) return;
        await new Promise((done) => setTimeout(done, NOTIFY_RETRY_MS));
      }
    }
  };
  const send = async () => {
    sending = true;
    do {
      again = false;
      await sendOnce();
    } while (again);
    sending = false;
  };
  return () => {
    if (sending) again = true;
    else void send();
  };
};

export const listenForDeliveries = (url: string, wakers: DispatcherWakers, onError: (error: unknown) => void): DeliveryListener => {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const byChannel = new Map<string, () => void>();
  for (const [name, wake] of Object.entries(wakers) as Array<[keyof DispatcherWakers, (() => void) | undefined]>) {
    if (wake !== undefined) byChannel.set(CHANNELS[name], wake);
  }
  const notified = (message: pg.Notification) => byChannel.get(message.channel)?.();

  const connect = async () => {
    const next = new pg.Client({ connectionString: url, keepAlive: true });
    // A connection fails once: its error event and its failed connect or LISTEN may both come, but
    // only one new connection follows (two would each LISTEN, and wake the dispatcher twice).
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      onError(error);
      void next.end().catch(() => {});
      if (!closed) retry = setTimeout(() => void connect(), 1000);
    };
    next.on("notification", notified);
    next.on("error", fail);
    try {
      await next.connect();
      // Deliveries' channel last: the connection's last statement names it (what an operator sees in pg_stat_activity).
      for (const channel of [...byChannel.keys()].reverse()) await next.query(`listen ${channel}`);
      if (closed) return void (await next.end());
      client = next;
      for (const wake of byChannel.values()) wake(); // catch up on anything committed while we were not listening
    } catch (error) {
      fail(error);
    }
  };
  void connect();

  return {
    listening: true,
    close: async () => {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
};
