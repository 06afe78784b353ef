import {
  AuthenticationError, ConnectionError, InvalidRequestError, NotFoundError, PermissionError, Platter, PlatterError, RateLimitError,
} from "@platter/sdk";

const platter = new Platter({ apiKey: process.env.PLATTER_API_KEY!, baseUrl: process.env.PLATTER_BASE_URL! });

/** What to tell an operator about a failed call. */
const explain = (error: unknown): string => {
  if (error instanceof InvalidRequestError) return `rejected: ${error.message}`; // e.g. "name is required"
  if (error instanceof NotFoundError) return "no such record";
  if (error instanceof AuthenticationError) return "the API key is missing, malformed or revoked";
  if (error instanceof PermissionError) return "this key is read-only";
  if (error instanceof RateLimitError) return `slow down; retry in ${error.retryAfterMs ?? "a few"} ms`;
  if (error instanceof ConnectionError) return `no answer: ${error.message}`; // retried already, maxRetries times
  if (error instanceof PlatterError) return `HTTP ${error.status}: ${error.message} (request ${error.requestId})`; // incl. ApiError (5xx)
  throw error;
};

try {
  await platter.events.retrieve(999_999_999);
} catch (error) {
  console.log(`${explain(error)} (status ${(error as PlatterError).status}, request ${(error as PlatterError).requestId})`);
}

try {
  await platter.clients.create({ name: "" });
} catch (error) {
  console.log(explain(error));
}

const readOnly = new Platter({ apiKey: process.env.PLATTER_READ_ONLY_KEY!, baseUrl: process.env.PLATTER_BASE_URL! });
await readOnly.clients.create({ name: "Ada" }).catch((error: unknown) => console.log(explain(error)));
