import { coverPartitionSql, WEBHOOK_HISTORY } from "@platter/persistence";
import { withRawClient } from "./test-database.ts";

/**
 * Moves webhook messages' history back in time, as retention sees it: the messages `where` selects
 * (alias `m`, parameters `$1`…), with their deliveries and attempts (the partition keys together), to
 * `createdAt` (SQL of `m.created_at`, e.g. `m.created_at - interval '2 hours'` or `now() - interval '31 days'`),
 * making first a partition for times before every partition (`HistoryPartitions.cover`).
 */
export const backdateHistory = (url: string, where: string, values: ReadonlyArray<unknown>, createdAt: string): Promise<void> =>
  withRawClient(url, async (client) => {
    const { rows: [oldest] } = await client.query<{ at: Date | null }>(`select min(${createdAt}) as at from webhook_messages m where ${where}`, [...values]);
    if (oldest?.at == null) return;
    await client.query(coverPartitionSql(WEBHOOK_HISTORY, new Date(oldest.at), 24 * 3600_000));
    await client.query("begin");
    try {
      await client.query(`create temp table moved on commit drop as select m.id, ${createdAt} as at from webhook_messages m where ${where}`, [...values]);
      await client.query(`update webhook_attempts a set delivery_created_at = moved.at
        from webhook_deliveries d join moved on moved.id = d.message_id where a.delivery_id = d.id`);
      await client.query(`update webhook_deliveries d set created_at = moved.at from moved where d.message_id = moved.id`);
      await client.query(`update webhook_messages m set created_at = moved.at from moved where m.id = moved.id`);
      await client.query("commit");
    } catch (error) {
      await client.query("rollback");
      throw error;
    }
  });
