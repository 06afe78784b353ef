import type { DatabaseUnavailable } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "./database.ts";

/** The roles of processes that share something between the instances live. */
export type ProcessRole = "api" | "dispatcher";

/** The processes sharing this database, as they announce themselves (system data, no organization's). */
export class ProcessInstances extends Context.Service<
  ProcessInstances,
  {
    /**
     * Marks instance `id` of `role` as seen now, forgets instances not seen for `staleAfterMs`,
     * and returns how many of `role` are live (this one included).
     */
    readonly heartbeat: (role: ProcessRole, id: string, staleAfterMs: number) => Effect.Effect<number, DatabaseUnavailable>;
    /** Removes instance `id` (a graceful stop), so the others take over its share at once. */
    readonly leave: (id: string) => Effect.Effect<void, DatabaseUnavailable>;
  }
>()("platter/persistence/ProcessInstances") {
  static readonly layer = Layer.effect(
    ProcessInstances,
    Effect.gen(function* () {
      const { rows } = yield* Database;
      return ProcessInstances.of({
        heartbeat: Effect.fnUntraced(function* (role: ProcessRole, id: string, staleAfterMs: number) {
          yield* rows("insert into process_instances (id, role) values (?, ?) on conflict (id) do update set seen_at = now()", [id, role]);
          yield* rows("delete from process_instances where seen_at < now() - ?::int * interval '1 millisecond'", [staleAfterMs]);
          const [row] = yield* rows<{ n: number }>("select count(*)::int as n from process_instances where role = ?", [role]);
          return Math.max(1, row?.n ?? 1);
        }),
        leave: (id: string) => Effect.asVoid(rows("delete from process_instances where id = ?", [id])),
      });
    }),
  );
}

/**
 * How often an instance of each role announces itself; the others forget one silent for three
 * times that. Dispatchers beat every second: until the others hear of a new one they keep their
 * old share of each endpoint's cap, so the cap can be exceeded for that long.
 */
export const HEARTBEAT_MS: Readonly<Record<ProcessRole, number>> = { api: 5_000, dispatcher: 1_000 };

/**
 * Announces this process as an instance of `role` now and every `HEARTBEAT_MS[role]`, telling
 * `onCount` how many of its role are live each time (a failed heartbeat, the database being
 * away, keeps the last count). `leave()` stops and removes it, so the others take over at once.
 */
export const announceInstance = async (
  run: <A>(program: Effect.Effect<A, DatabaseUnavailable, ProcessInstances>) => Promise<A>,
  role: ProcessRole,
  onCount: (live: number) => void,
): Promise<{ readonly leave: () => Promise<void> }> => {
  const id = crypto.randomUUID();
  const every = HEARTBEAT_MS[role];
  const beat = () => run(ProcessInstances.use((i) => i.heartbeat(role, id, 3 * every))).then(onCount, () => {});
  await beat();
  const timer = setInterval(() => void beat(), every);
  timer.unref();
  return {
    leave: async () => {
      clearInterval(timer);
      await run(ProcessInstances.use((i) => i.leave(id))).catch(() => {});
    },
  };
};
