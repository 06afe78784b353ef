import { parseTraceparent } from "@platter/domain";
import { describe, expect, it } from "vitest";
import { ConfigError, loadApiConfig } from "../src/config.ts";

/** The standard OpenTelemetry variables as the API (and the dispatcher, through the same reader) reads them, and the W3C header. */

describe("trace export settings", () => {
  it("exports nothing unless an endpoint is set", () => {
    expect(loadApiConfig({}).traces).toBeUndefined();
  });

  it("has the documented defaults once OTEL_EXPORTER_OTLP_ENDPOINT is set", () => {
    expect(loadApiConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).traces).toEqual({
      url: "http://collector:4318/v1/traces", headers: {}, protocol: "http/protobuf", serviceName: "platter-api", resourceAttributes: {},
      sampler: "parentbased_always_on", samplerRatio: 1, exportIntervalMs: 5_000, maxBatchSize: 512, timeoutMs: 10_000,
    });
  });

  it("reads every variable it knows", () => {
    expect(loadApiConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://ignored:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector.example/otlp/traces",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Basic%20abc,x-team=web",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "api-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=production,service.name=overridden",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_BSP_SCHEDULE_DELAY: "1000",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "100",
      OTEL_EXPORTER_OTLP_TIMEOUT: "3000",
    }).traces).toEqual({
      url: "https://collector.example/otlp/traces", headers: { authorization: "Basic abc", "x-team": "web" }, protocol: "http/json",
      serviceName: "api-eu", resourceAttributes: { "deployment.environment.name": "production" }, sampler: "parentbased_traceidratio",
      samplerRatio: 0.25, exportIntervalMs: 1_000, maxBatchSize: 100, timeoutMs: 3_000,
    });
  });

  it("takes the service name from OTEL_RESOURCE_ATTRIBUTES when OTEL_SERVICE_NAME is unset", () => {
    expect(loadApiConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/", OTEL_RESOURCE_ATTRIBUTES: "service.name=api-blue" }).traces)
      .toMatchObject({ url: "http://c:4318/v1/traces", serviceName: "api-blue" });
  });

  it.each([
    [{ OTEL_SDK_DISABLED: "true" }],
    [{ OTEL_TRACES_EXPORTER: "none" }],
  ])("exports nothing when the operator says so: %o", (env) => {
    expect(loadApiConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", ...env }).traces).toBeUndefined();
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT"],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "grpc://collector:4317" }, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "OTEL_EXPORTER_OTLP_PROTOCOL"],
    [{ OTEL_TRACES_SAMPLER: "jaeger_remote" }, "OTEL_TRACES_SAMPLER"],
    [{ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }, "OTEL_TRACES_SAMPLER_ARG"],
    [{ OTEL_EXPORTER_OTLP_HEADERS: "novalue" }, "OTEL_EXPORTER_OTLP_HEADERS"],
    [{ OTEL_RESOURCE_ATTRIBUTES: "a=%E0%A4%A" }, "OTEL_RESOURCE_ATTRIBUTES"],
    [{ OTEL_TRACES_EXPORTER: "zipkin" }, "OTEL_TRACES_EXPORTER"],
  ])("refuses %o, naming %s", (env, name) => {
    expect(() => loadApiConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", ...env })).toThrow(ConfigError);
    expect(() => loadApiConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", ...env })).toThrow(name);
  });
});

describe("the traceparent header", () => {
  it.each([
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: true }],
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: false }],
    ["01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-later", { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: true }],
  ])("reads %s", (header, expected) => {
    expect(parseTraceparent(header)).toEqual(expected);
  });

  it.each([
    ["ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],
    ["00-00000000000000000000000000000000-00f067aa0ba902b7-01"],
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"],
    ["00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"],
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"],
    ["00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"],
    ["garbage"],
    [`00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-${"x".repeat(300)}`],
  ])("ignores %s (the request starts a trace of its own)", (header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
});
