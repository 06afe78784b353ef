/** The part of autocannon's programmatic API the benchmark uses (the package ships no types). */
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  export interface AutocannonRequest {
    readonly method?: string;
    readonly path?: string;
    readonly headers?: Record<string, string>;
    readonly body?: string;
  }

  export interface AutocannonOptions {
    readonly url: string;
    readonly connections?: number;
    /** Seconds. */
    readonly duration?: number;
    readonly timeout?: number;
    readonly method?: string;
    readonly headers?: Record<string, string>;
    readonly body?: string;
    /** Cycled through in order on every connection. */
    readonly requests?: readonly AutocannonRequest[];
  }

  export interface AutocannonStats {
    readonly average: number;
    readonly mean: number;
    readonly stddev: number;
    readonly min: number;
    readonly max: number;
    readonly total: number;
    readonly p50: number;
    readonly p99: number;
  }

  export interface AutocannonResult {
    readonly requests: AutocannonStats & { readonly sent: number };
    readonly latency: AutocannonStats;
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly resets: number;
    /** Seconds. */
    readonly duration: number;
    readonly statusCodeStats: Record<string, { readonly count: number }>;
  }

  export interface AutocannonInstance extends EventEmitter, PromiseLike<AutocannonResult> {
    on(event: "response", listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): this;
  }

  export default function autocannon(options: AutocannonOptions): AutocannonInstance;
}
