import type { DeliveryQueue } from "@platter/persistence/dispatcher";
import { Effect } from "effect";
import type { DispatcherObserver } from "@platter/webhooks";
import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** What the dispatcher loop says about its own slots. */
interface Slots {
  readonly activeAttempts: number;
  readonly slotSeconds: number;
}

/** Prometheus metrics of one dispatcher process; `slots` is asked at each scrape. */
export const createDispatcherMetrics = (
  store: DeliveryQueue["Service"],
  slots: () => Slots,
): { registry: Registry; observer: DispatcherObserver; operatorObserver: DispatcherObserver } => {
  const registry = new Registry();
  new Gauge({
    name: "platter_dispatcher_attempts_in_flight",
    help: "Attempts this dispatcher has in flight: its slots in use, of DISPATCHER_CONCURRENCY.",
    registers: [registry],
    collect() {
      this.set(slots().activeAttempts);
    },
  });
  let slotSecondsCounted = 0;
  new Counter({
    name: "platter_dispatcher_slot_seconds_total",
    help: "Seconds of slots in use (attempts in flight × time); its rate over DISPATCHER_CONCURRENCY is the share of slots kept busy.",
    registers: [registry],
    collect() {
      const now = slots().slotSeconds;
      this.inc(now - slotSecondsCounted);
      slotSecondsCounted = now;
    },
  });
  const attempts = new Counter({
    name: "platter_webhook_attempts_total",
    help: "Delivery attempts made, by outcome (succeeded, failed, gone).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "platter_webhook_attempt_duration_seconds",
    help: "Time from sending a delivery to its response or failure.",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [registry],
  });
  const operatorAttempts = new Counter({
    name: "platter_operator_webhook_attempts_total",
    help: "Operational webhooks (endpoint notices) sent to OPERATOR_WEBHOOK_URL, by outcome (succeeded, failed, gone).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const loopErrors = new Counter({
    name: "platter_dispatcher_loop_errors_total",
    help: "Errors of the dispatcher loop (database unavailable and the like).",
    registers: [registry],
  });
  new Gauge({
    name: "platter_webhook_queue_depth",
    help: "Deliveries pending (due now or waiting for a retry).",
    registers: [registry],
    async collect() {
      this.set(await Effect.runPromise(store.queueDepth()));
    },
  });
  // The three per-endpoint gauges come from one query, made at most once per scrape.
  let latest: Promise<void> | undefined;
  const refresh = () =>
    (latest ??= Effect.runPromise(store.endpointStats())
      .then((stats) => {
        for (const gauge of Object.values(endpointGauges)) gauge.reset();
        for (const s of stats) {
          const labels = { organization: String(s.organizationId), endpoint: String(s.endpointId) };
          endpointGauges.queueDepth.set(labels, s.queueDepth);
          endpointGauges.inFlight.set(labels, s.inFlight);
          for (const state of ["closed", "open", "half_open"] as const) {
            endpointGauges.circuit.set({ ...labels, state }, s.circuit === state ? 1 : 0);
          }
        }
      })
      .finally(() => setImmediate(() => (latest = undefined))));
  const endpointGauges = {
    queueDepth: new Gauge({
      name: "platter_webhook_endpoint_queue_depth",
      help: "Deliveries pending for one endpoint (in flight included); endpoints with none are not listed.",
      labelNames: ["organization", "endpoint"],
      registers: [registry],
      collect: refresh,
    }),
    inFlight: new Gauge({
      name: "platter_webhook_endpoint_in_flight",
      help: "Attempts in flight to one endpoint, across every dispatcher.",
      labelNames: ["organization", "endpoint"],
      registers: [registry],
      collect: refresh,
    }),
    circuit: new Gauge({
      name: "platter_webhook_endpoint_circuit",
      help: "One endpoint's circuit: 1 for its current state (closed, open, half_open), 0 for the others.",
      labelNames: ["organization", "endpoint", "state"],
      registers: [registry],
      collect: refresh,
    }),
  };
  for (const outcome of ["succeeded", "failed", "gone"]) {
    attempts.inc({ outcome }, 0);
    operatorAttempts.inc({ outcome }, 0);
  }
  return {
    registry,
    observer: {
      attempted: (outcome, durationMs) => {
        attempts.inc({ outcome });
        duration.observe(durationMs / 1000);
      },
      failedLoop: () => loopErrors.inc(),
    },
    /** The operator channel's loop: its attempts by outcome, and its errors with the business loop's. */
    operatorObserver: {
      attempted: (outcome) => operatorAttempts.inc({ outcome }),
      failedLoop: () => loopErrors.inc(),
    },
  };
};
