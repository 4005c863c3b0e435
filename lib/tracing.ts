import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
} from "@opentelemetry/api";
import type { NodeTracerProvider, SpanProcessor } from "@opentelemetry/sdk-trace-node";

/**
 * OpenTelemetry traces across the hop the logs cannot follow: the submit route's span travels in
 * the Kafka message's `traceparent` header (W3C trace context) and the worker continues it. With
 * no OTEL_EXPORTER_OTLP_ENDPOINT nothing is registered, nor the SDK loaded: every call below is
 * the API's no-op.
 */

const holder = globalThis as unknown as { __dispatchTracing?: NodeTracerProvider };

export interface TracingOptions {
  /** service.name of every span: dispatch-web, dispatch-worker. */
  serviceName: string;
  /** OTLP over HTTP (the exporter reads OTEL_EXPORTER_OTLP_* itself, headers included). */
  otlpEndpoint?: string;
  /** Other processors (tests pass an in-memory exporter's). */
  spanProcessors?: SpanProcessor[];
}

/** Registers the process's tracer provider once, when there is somewhere to send spans; returns it, or undefined (tracing off). */
export async function startTracing(options: TracingOptions): Promise<NodeTracerProvider | undefined> {
  if (holder.__dispatchTracing) return holder.__dispatchTracing;
  if (!options.otlpEndpoint && !options.spanProcessors?.length) return undefined;
  const [{ BatchSpanProcessor, NodeTracerProvider }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
    ]);
  const processors = [...(options.spanProcessors ?? [])];
  if (options.otlpEndpoint) processors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName }),
    spanProcessors: processors,
  });
  // Also sets the W3C trace-context propagator and the AsyncLocalStorage context manager.
  provider.register();
  holder.__dispatchTracing = provider;
  return provider;
}

/** True once startTracing registered a provider: spans are recorded. */
export function tracingStarted(): boolean {
  return holder.__dispatchTracing !== undefined;
}

/** Flushes and stops the provider (a worker's SIGTERM). */
export async function stopTracing(): Promise<void> {
  const provider = holder.__dispatchTracing;
  holder.__dispatchTracing = undefined;
  // Stopping: spans the exporter cannot send now are lost either way.
  await provider?.shutdown().catch(() => {});
}

const tracer = () => trace.getTracer("dispatch");

/**
 * Runs `fn` in a new active span, ended when it settles; a throw marks the span as an error. The
 * parent is the active context, or `parent` when given (a Kafka message's extracted context).
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await fn(span);
      } catch (error) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** A span for a call this process makes (a Redis command), child of the active span; none when nothing is being traced. */
export function clientSpan(name: string, attributes: Attributes): Span | undefined {
  if (!trace.getActiveSpan()) return undefined;
  return tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes });
}

/** The active context's `traceparent` (and `tracestate`), for a message's headers; empty when tracing is off. */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

type HeaderValue = Buffer | string | (Buffer | string)[] | undefined;

const kafkaGetter: TextMapGetter<Record<string, HeaderValue>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    if (value === undefined) return undefined;
    return Array.isArray(value) ? value.map(String) : String(value);
  },
};

/** The trace context a Kafka message carries in its headers (the root context if none). */
export function messageTraceContext(headers: Record<string, HeaderValue> | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, headers ?? {}, kafkaGetter);
}

/**
 * The parent of a request's span: the active context when the server already traces the request
 * (Next does, once a provider is registered), else the request's own `traceparent` header.
 */
export function requestTraceContext(request: Request): Context {
  if (trace.getActiveSpan()) return context.active();
  return propagation.extract(ROOT_CONTEXT, Object.fromEntries(request.headers));
}

/**
 * A route handler run in a server span, child of the request's trace context (see
 * requestTraceContext), with the answer's status on it. The name may depend on the request: one
 * handler served at two paths names the one asked for.
 */
export function traced<A extends unknown[]>(
  name: string | ((request: Request) => string),
  handler: (request: Request, ...rest: A) => Promise<Response>,
): (request: Request, ...rest: A) => Promise<Response> {
  return (request, ...rest) =>
    inSpan(
      typeof name === "string" ? name : name(request),
      { kind: SpanKind.SERVER, parent: requestTraceContext(request) },
      async (span) => {
        const response = await handler(request, ...rest);
        span.setAttribute("http.response.status_code", response.status);
        return response;
      },
    );
}

/** `trace_id` and `span_id` of the active span, for log lines; empty when there is none. */
export function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan()?.spanContext();
  return span && trace.isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {};
}

export { SpanKind };
