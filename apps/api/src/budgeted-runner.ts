import { forkRequest, type RequestStorage, type RequestRuntime, requestOutcome } from "@platter/persistence";
import { Effect, type Exit, type Fiber } from "effect";
import type { Context } from "koa";
import { DatabaseUnavailable } from "@platter/domain";
import { requestSpanOf } from "./request-span.ts";

/** Why a request was answered 503 although the database has not failed (yet): it was too slow for the request's budget. */
export class RequestDatabaseTimeout extends Error {
  constructor(budgetMs: number) {
    super(`the request waited on the database for its whole budget of ${budgetMs} ms`);
    this.name = "RequestDatabaseTimeout";
  }
}

/**
 * A program waiting on the database: until when, and how to end its wait. It lets go of its fiber
 * and its settle function as soon as the wait ends (`release`). The entry sits in a Set whose
 * members come and go with every request, and V8 keeps a Set's outgrown hash tables linked to
 * their successors; once one of those is in the old generation, every later entry stays
 * reachable through each young-generation collection, and with it whatever the entry holds. While
 * entries held their fiber (and so its result, a whole page), that promoted about 22 KB per list
 * request and tripled the garbage collector's CPU (tools/bench, 2026-11-27: scavenges 88 µs of
 * CPU per request, 30 µs once released; the reference 19).
 */
class Waiting<A, E> {
  readonly until: number;
  private settle: ((outcome: Exit.Exit<A, E> | "expired") => void) | undefined;
  private fiber: Fiber.Fiber<A, E> | undefined;

  constructor(until: number, settle: (outcome: Exit.Exit<A, E> | "expired") => void, fiber: Fiber.Fiber<A, E>) {
    this.until = until;
    this.settle = settle;
    this.fiber = fiber;
  }

  /** Answers the request as expired (settle first: interrupting may end the fiber at once), then interrupts the program. */
  expire(): void {
    const { settle, fiber } = this;
    this.release();
    settle?.("expired");
    fiber?.interruptUnsafe();
  }

  release(): void {
    this.settle = undefined;
    this.fiber = undefined;
  }
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
  private readonly waiting = new Set<Waiting<unknown, unknown>>();
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
    // No promise wrapper, abort signal or race per call: a fiber and its observer.
    // Under the request's span when the process traces (a property read otherwise).
    const span = requestSpanOf(ctx);
    const fiber = forkRequest(this.runtime, span === undefined ? program : Effect.withParentSpan(program, span, { captureStackTrace: false }));
    let waiting: Waiting<A, E> | undefined;
    try {
      const outcome = await new Promise<Exit.Exit<A, E> | "expired">((settle) => {
        waiting = new Waiting(began + this.budgetMs - spent, settle, fiber);
        this.waiting.add(waiting as Waiting<unknown, unknown>);
        this.arm();
        fiber.addObserver(settle);
      });
      if (outcome === "expired") throw new DatabaseUnavailable({ reason: new RequestDatabaseTimeout(this.budgetMs) });
      return requestOutcome(outcome);
    } finally {
      this.waiting.delete(waiting as Waiting<unknown, unknown>);
      waiting!.release();
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
