import { type RequestStorage, type RequestRuntime, requestOutcome } from "@platter/persistence";
import type { Effect, Exit } from "effect";
import type { Context } from "koa";
import { DatabaseUnavailable } from "./http-errors.ts";

/** Why a request was answered 503 although the database has not failed (yet): it was too slow for the request's budget. */
export class RequestDatabaseTimeout extends Error {
  constructor(budgetMs: number) {
    super(`the request waited on the database for its whole budget of ${budgetMs} ms`);
    this.name = "RequestDatabaseTimeout";
  }
}

/** A program waiting on the database, and what ends its wait when its time is up. */
interface Waiting {
  readonly until: number;
  readonly expire: () => void;
}

/** What a request has waited on the database so far, kept on its context (`ctx.state`): no WeakMap entry per request. */
const SPENT = Symbol("platter/api/database-wait");

/** How often waits are checked against their deadlines: an answer leaves at most this late. */
const SWEEP_MS = 50;

/**
 * Runs requests' programs within each request's database budget: the waits of one request (its
 * key lookup, its work) add up to at most `budgetMs`. Whatever makes a wait long — a pool with no
 * free connection, a frozen server the silence watchdog has not given up on yet, a slow statement
 * — the request is answered `DatabaseUnavailable` (503 with Retry-After) when its budget is spent.
 * The program is interrupted then and finishes in the background: a transaction that has not
 * reached its commit rolls back. One interval, armed while something waits, checks every
 * deadline: nothing per statement or per request.
 */
export class BudgetedRunner {
  private readonly runtime: RequestRuntime;
  private readonly budgetMs: number;
  private readonly waiting = new Set<Waiting>();
  private sweep: NodeJS.Timeout | undefined;

  constructor(runtime: RequestRuntime, budgetMs: number) {
    this.runtime = runtime;
    this.budgetMs = budgetMs;
  }

  /** Runs `program` for the request `ctx` within what is left of its budget (see `requestOutcome` for what it throws). */
  async run<A, E>(ctx: Context, program: Effect.Effect<A, E, RequestStorage>): Promise<A> {
    const state = ctx.state as { [SPENT]?: number };
    const spent = state[SPENT] ?? 0;
    const began = performance.now();
    // A fiber and its observer: no promise wrapper, abort signal or race per call (tools/bench's profile).
    const fiber = this.runtime.runFork(program);
    let waiting: Waiting | undefined;
    try {
      const outcome = await new Promise<Exit.Exit<A, E> | "expired">((settle) => {
        // Settle first: interrupting may end the fiber (and call its observer) at once.
        waiting = { until: began + this.budgetMs - spent, expire: () => (settle("expired"), fiber.interruptUnsafe()) };
        this.waiting.add(waiting);
        this.arm();
        fiber.addObserver(settle);
      });
      if (outcome === "expired") throw new DatabaseUnavailable({ reason: new RequestDatabaseTimeout(this.budgetMs) });
      return requestOutcome(outcome, (reason) => new DatabaseUnavailable({ reason }));
    } finally {
      this.waiting.delete(waiting!);
      state[SPENT] = spent + performance.now() - began;
    }
  }

  private arm(): void {
    if (this.sweep !== undefined) return;
    this.sweep = setInterval(() => {
      if (this.waiting.size === 0) {
        clearInterval(this.sweep);
        this.sweep = undefined;
        return;
      }
      const now = performance.now();
      for (const waiting of this.waiting) {
        if (waiting.until <= now) {
          this.waiting.delete(waiting);
          waiting.expire();
        }
      }
    }, SWEEP_MS);
    this.sweep.unref();
  }
}
