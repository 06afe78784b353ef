import pg from "pg";

/**
 * Wakes a dispatcher when outbox rows commit (LISTEN platter_outbox; a trigger NOTIFYs per
 * statement). A dropped connection is re-established; polling covers the gap meanwhile.
 */
export interface OutboxListener {
  readonly close: () => Promise<void>;
}

export const listenForOutbox = (url: string, onNotify: () => void, onError: (error: unknown) => void): OutboxListener => {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    const next = new pg.Client({ connectionString: url });
    next.on("notification", onNotify);
    next.on("error", (error) => {
      onError(error);
      void next.end().catch(() => {});
      if (!closed) retry = setTimeout(() => void connect(), 1000);
    });
    try {
      await next.connect();
      await next.query("listen platter_outbox");
      if (closed) return void (await next.end());
      client = next;
      onNotify(); // catch up on anything committed while we were not listening
    } catch (error) {
      onError(error);
      void next.end().catch(() => {});
      if (!closed) retry = setTimeout(() => void connect(), 1000);
    }
  };
  void connect();

  return {
    close: async () => {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
};
