// What the server needs of a Prometheus registry: prom-client's `Registry` has it. Declared here
// rather than imported so that the server's declarations name no optional peer dependency (a
// TypeScript project without prom-client still compiles against `airlock-hitl/server`).
export interface MetricsRegistry {
  /** The registry's metrics in the Prometheus text format. */
  metrics(): Promise<string>;
  /** The content type of that text. */
  readonly contentType: string;
  getSingleMetric(name: string): unknown;
}
