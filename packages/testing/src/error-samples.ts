import type { AddressInfo } from "node:net";
import {
  apiKeyLimitReached, alertRecipientLimitReached, DatabaseUnavailable, endpointLimitReached, EndpointUrlRefused, endpointUrlTaken, Forbidden, FormRefused, IdempotencyKeyInProgress,
  IdempotencyKeyReused, InvalidCursor, InvalidInput, InvalidTransition, MailNotConfigured, NotFound, PayloadTooLarge, type PlatterError, RateLimited, secretKeyUnavailable,
  ShuttingDown, SignInRefused, SignInRequired, TooManyActions, TooManyFailedSignIns, TooManyPageLoads, Unauthenticated, UnknownEndpoint, UnknownPage,
  UnreadableForm, UnsupportedMediaType,
} from "@platter/domain";
import Koa from "koa";

/**
 * One instance of every tagged error of the error catalogue, for the tests that render each at
 * every edge: a new `PlatterError` without a sample here does not compile.
 */
export const ERROR_SAMPLES: { readonly [Tag in PlatterError["_tag"]]: Extract<PlatterError, { _tag: Tag }> } = {
  Unauthenticated: new Unauthenticated(),
  Forbidden: new Forbidden(),
  NotFound: new NotFound(),
  UnknownEndpoint: new UnknownEndpoint(),
  UnknownPage: new UnknownPage(),
  InvalidInput: new InvalidInput({ message: "name must be at most 200 characters" }),
  InvalidCursor: new InvalidCursor(),
  InvalidTransition: new InvalidTransition({ message: "A void invoice cannot be paid" }),
  PayloadTooLarge: new PayloadTooLarge({ limitBytes: 1024 }),
  UnsupportedMediaType: new UnsupportedMediaType(),
  IdempotencyKeyReused: new IdempotencyKeyReused(),
  IdempotencyKeyInProgress: new IdempotencyKeyInProgress(),
  RateLimited: new RateLimited({ limitedBy: "organization", retryAfterSeconds: 7 }),
  DatabaseUnavailable: new DatabaseUnavailable({ reason: new Error("connect ECONNREFUSED 127.0.0.1:5432") }),
  ShuttingDown: new ShuttingDown(),
  SecretKeyUnavailable: secretKeyUnavailable("k-old"),
  SignInRefused: new SignInRefused({ reason: "expired" }),
  EndpointLimitReached: endpointLimitReached(3),
  ApiKeyLimitReached: apiKeyLimitReached(5),
  AlertRecipientLimitReached: alertRecipientLimitReached(3),
  MailNotConfigured: new MailNotConfigured(),
  EndpointUrlRefused: new EndpointUrlRefused({ message: "localhost is not a public address" }),
  EndpointUrlTaken: endpointUrlTaken("https://example.com/hooks", 12),
  SignInRequired: new SignInRequired(),
  FormRefused: new FormRefused(),
  UnreadableForm: new UnreadableForm(),
  TooManyActions: new TooManyActions({ what: "test events", allowed: 10, windowMs: 60_000, retryAfterSeconds: 42, back: "/webhooks" }),
  TooManyFailedSignIns: new TooManyFailedSignIns({ retryAfterSeconds: 90 }),
  TooManyPageLoads: new TooManyPageLoads({ allowed: 8 }),
};

/** An HTTP server on 127.0.0.1 whose every request throws the sample its last path segment names. */
export interface ErrorSampleServer {
  /** `http://127.0.0.1:<port>`: `GET {origin}/…/<tag>` throws `ERROR_SAMPLES[tag]`, `…/defect` a plain `Error`. */
  readonly origin: string;
  readonly close: () => Promise<void>;
}

/**
 * Serves `ERROR_SAMPLES` through an edge's error answer (`answer`: the Koa middleware under test,
 * which catches what is thrown below it), for the tests that check each edge renders every
 * catalogue entry: the API's JSON, the Developer area's pages and `/cli/` JSON.
 */
export const serveErrorSamples = async (answer: Koa.Middleware): Promise<ErrorSampleServer> => {
  const app = new Koa();
  app.use(answer);
  app.use((ctx) => {
    const tag = ctx.path.split("/").at(-1)!;
    if (tag === "defect") throw new Error("a bug");
    throw ERROR_SAMPLES[tag as PlatterError["_tag"]];
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((listening) => server.once("listening", listening));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
};
