import { Context, Effect, Layer } from "effect";
import { Database } from "./database.ts";
import { traced } from "./traced.ts";

/** The API processes sharing this database, as they announce themselves (system data, no organization's). */
export class ApiInstances extends Context.Service<
  ApiInstances,
  {
    /**
     * Marks instance `id` as seen now, forgets instances not seen for `staleAfterMs`, and returns
     * how many are live (this one included).
     */
    readonly heartbeat: (id: string, staleAfterMs: number) => Effect.Effect<number>;
    /** Removes instance `id` (a graceful stop), so the others take over its share at once. */
    readonly leave: (id: string) => Effect.Effect<void>;
  }
>()("platter/persistence/ApiInstances") {
  static readonly layer = Layer.effect(
    ApiInstances,
    Effect.gen(function* () {
      const { rows } = yield* Database;
      return ApiInstances.of({
        heartbeat: traced("ApiInstances.heartbeat")(Effect.fnUntraced(function* (id: string, staleAfterMs: number) {
          yield* rows("insert into api_instances (id) values (?) on conflict (id) do update set seen_at = now()", [id]);
          yield* rows("delete from api_instances where seen_at < now() - ?::int * interval '1 millisecond'", [staleAfterMs]);
          const [row] = yield* rows<{ n: number }>("select count(*)::int as n from api_instances");
          return Math.max(1, row?.n ?? 1);
        })),
        leave: traced("ApiInstances.leave")((id: string) => Effect.asVoid(rows("delete from api_instances where id = ?", [id]))),
      });
    }),
  );
}
