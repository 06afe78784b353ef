import pg from "pg";

/**
 * Wakes a dispatcher when deliveries commit (LISTEN platter_deliveries; a trigger on
 * webhook_deliveries NOTIFYs, once per transaction). A dropped connection is re-established;
 * polling covers the gap meanwhile.
 */
export interface DeliveryListener {
  /** Whether it listens at all (false behind a transaction pooler without a LISTEN URL: poll). */
  readonly listening: boolean;
  readonly close: () => Promise<void>;
}

export const listenForDeliveries = (url: string, onNotify: () => void, onError: (error: unknown) => void): DeliveryListener => {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

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
    next.on("notification", onNotify);
    next.on("error", fail);
    try {
      await next.connect();
      await next.query("listen platter_deliveries");
      if (closed) return void (await next.end());
      client = next;
      onNotify(); // catch up on anything committed while we were not listening
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
