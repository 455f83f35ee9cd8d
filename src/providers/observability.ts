/**
 * Trace uploads of LLM observability tools, which an app routed through a tape (the fetch switch)
 * sends beside its model calls: Langfuse's JS SDK batches its events to
 * `POST /api/public/ingestion`, and an OTLP/HTTP exporter that uses fetch posts JSON spans to
 * Langfuse's `/api/public/otel/v1/traces`. Their answers (an ack, per-event results) never depend
 * on what the events say, and every run sends fresh event ids and timestamps, so they are
 * telemetry as ProviderModule.telemetry means it: filed by route alone and replayed in order. A
 * bare collector's `/v1/traces` is not among them: on an LLM API's host that path may be the
 * API's own.
 */

/** The upload routes: matched on the path, whatever prefix a self-hosted server puts before it. */
export const OBSERVABILITY_UPLOADS: readonly { readonly method: string; readonly path: RegExp }[] = [
  { method: 'POST', path: /\/api\/public\/ingestion$/ },
  { method: 'POST', path: /\/api\/public\/otel\/v1\/(?:traces|metrics|logs)$/ },
];
