import { ConnectionError, errorClassFor, PlatterError, RateLimitError } from "./errors.ts";
import { isRetryable, retryAfterOf, retryDelayMs } from "./retry-policy.ts";

/**
 * Sends requests to the API: bearer key, JSON in and out, a timeout per attempt, typed errors,
 * and retries of safe requests with backoff.
 */

/** How the transport is configured; see `PlatterOptions`. */
export interface TransportSettings {
  readonly apiKey: string;
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  readonly fetch: typeof globalThis.fetch;
}

/** One API request. `path` is relative to the base URL (`/events`). */
export interface ApiRequest {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>> | undefined;
  readonly body?: unknown;
  readonly idempotencyKey?: string | undefined;
}

const wait = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

const urlOf = (baseUrl: string, request: ApiRequest): string => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) search.set(name, String(value));
  }
  const query = search.toString();
  return `${baseUrl}${request.path}${query === "" ? "" : `?${query}`}`;
};

const describeFailure = (error: unknown): string => {
  const e = error as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message ?? String(error)} (${cause})` : (e.message ?? String(error));
};

const parseJson = (text: string): unknown => {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
};

const errorOf = (status: number, headers: Headers, body: unknown, text: string): PlatterError => {
  const serverText = (body as { error?: unknown } | undefined)?.error;
  const message = typeof serverText === "string" ? serverText : `HTTP ${status}${text === "" ? "" : `: ${text.slice(0, 200)}`}`;
  const details = { status, headers, requestId: headers.get("x-request-id") ?? undefined };
  const ErrorClass = errorClassFor(status);
  return ErrorClass === RateLimitError
    ? new RateLimitError(message, { ...details, retryAfterMs: retryAfterOf(headers) })
    : new ErrorClass(message, details);
};

/** Sends API requests with retries; one per `Platter` client. */
export class Transport {
  readonly #settings: TransportSettings;

  constructor(settings: TransportSettings) {
    this.#settings = settings;
  }

  /** Sends `request`, retrying safe ones on connection failures, 429, 5xx (see `isRetryable`). */
  async request<Body>(request: ApiRequest): Promise<Body> {
    for (let retry = 0; ; retry++) {
      try {
        return (await this.#attempt(request)) as Body;
      } catch (error) {
        if (!(error instanceof PlatterError)) throw error;
        error.idempotencyKey = request.idempotencyKey;
        if (retry >= this.#settings.maxRetries || !isRetryable(error, request)) throw error;
        await wait(retryDelayMs(retry, error));
      }
    }
  }

  /** One HTTP exchange; the timeout covers the whole of it, body included. */
  async #attempt(request: ApiRequest): Promise<unknown> {
    const { apiKey, baseUrl, timeoutMs, fetch } = this.#settings;
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, accept: "application/json" };
    if (request.body !== undefined) headers["content-type"] = "application/json";
    if (request.idempotencyKey !== undefined) headers["idempotency-key"] = request.idempotencyKey;
    // Built before sending: a mistake in the caller's input (a BigInt in the body, a key fetch
    // refuses) is a TypeError now, not a connection failure to retry.
    const url = urlOf(baseUrl, request);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    new Headers(headers);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { method: request.method, headers, body, signal: abort.signal });
      text = await response.text();
    } catch (error) {
      const message = abort.signal.aborted
        ? `Request timed out after ${timeoutMs} ms: ${request.method} ${request.path}`
        : `Could not reach the Platter API: ${request.method} ${request.path}: ${describeFailure(error)}`;
      throw new ConnectionError(message, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    const parsed = parseJson(text);
    if (!response.ok) throw errorOf(response.status, response.headers, parsed, text);
    if (parsed === undefined) {
      throw new PlatterError(`Expected a JSON body, got: ${text.slice(0, 200) || "nothing"}`, {
        status: response.status,
        headers: response.headers,
        requestId: response.headers.get("x-request-id") ?? undefined,
      });
    }
    return parsed;
  }
}
