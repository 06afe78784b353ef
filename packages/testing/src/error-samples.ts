import {
  apiKeyLimitReached, DatabaseUnavailable, endpointLimitReached, EndpointUrlRefused, endpointUrlTaken, Forbidden, FormRefused, IdempotencyKeyInProgress,
  IdempotencyKeyReused, InvalidCursor, InvalidInput, InvalidTransition, NotFound, PayloadTooLarge, type PlatterError, RateLimited, secretKeyUnavailable,
  ShuttingDown, SignInRefused, SignInRequired, TooManyActions, TooManyFailedSignIns, TooManyPageLoads, Unauthenticated, UnknownEndpoint, UnknownPage,
  UnreadableForm, UnsupportedMediaType,
} from "@platter/domain";

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
  EndpointUrlRefused: new EndpointUrlRefused({ message: "localhost is not a public address" }),
  EndpointUrlTaken: endpointUrlTaken("https://example.com/hooks", 12),
  SignInRequired: new SignInRequired(),
  FormRefused: new FormRefused(),
  UnreadableForm: new UnreadableForm(),
  TooManyActions: new TooManyActions({ what: "test events", allowed: 10, windowMs: 60_000, retryAfterSeconds: 42, back: "/webhooks" }),
  TooManyFailedSignIns: new TooManyFailedSignIns({ retryAfterSeconds: 90 }),
  TooManyPageLoads: new TooManyPageLoads({ allowed: 8 }),
};
