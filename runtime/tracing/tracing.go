// Package tracing is the gateway's OpenTelemetry tracing: one span per tool
// call, a client child span per upstream exchange whose W3C traceparent the
// upstream request carries, exported over OTLP/HTTP (protobuf).
//
// Tracing is on only when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT is set (FromEnv returns nil otherwise); a nil
// *Tracer is never called, so a gateway without tracing pays one nil check
// per hook. Span names and attributes carry the served connector and tool,
// never the caller's subject or arguments.
package tracing

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// The variables that turn tracing on (the OpenTelemetry exporter spec's).
const (
	TracesEndpointEnv = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EndpointEnv       = "OTEL_EXPORTER_OTLP_ENDPOINT"
)

// Tracer starts the gateway's spans.
type Tracer struct {
	endpoint string // the OTLP traces URL (empty for New)
	tp       *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
}

// FromEnv returns a Tracer exporting to the OTLP/HTTP endpoint getenv names,
// or nil when neither endpoint variable is set. The traces endpoint is used
// as given; the general one gets "/v1/traces" appended, as the spec says.
// Everything else (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_BSP_*) is read from
// the process environment by the SDK itself.
func FromEnv(getenv func(string) string) (*Tracer, error) {
	endpoint := strings.TrimSpace(getenv(TracesEndpointEnv))
	name := TracesEndpointEnv
	if endpoint == "" {
		base := strings.TrimSpace(getenv(EndpointEnv))
		if base == "" {
			return nil, nil
		}
		endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
		name = EndpointEnv
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s must be an http(s) URL, not %q", name, endpoint)
	}
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %v", err)
	}
	res, err := resource.Merge(resource.Default(),
		resource.NewSchemaless(attribute.String("service.name", serviceName(getenv))))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := New(tp)
	t.endpoint = endpoint
	return t, nil
}

// Endpoint is the OTLP/HTTP traces URL spans are exported to.
func (t *Tracer) Endpoint() string { return t.endpoint }

// serviceName is OTEL_SERVICE_NAME, else "anvil-gateway".
func serviceName(getenv func(string) string) string {
	if s := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); s != "" {
		return s
	}
	return "anvil-gateway"
}

// New returns a Tracer over tp, propagating W3C trace context.
func New(tp *sdktrace.TracerProvider) *Tracer {
	return &Tracer{tp: tp, tracer: tp.Tracer("github.com/anvil-dev/anvil/runtime"), prop: propagation.TraceContext{}}
}

// Shutdown flushes the spans not yet exported and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.tp.Shutdown(ctx) }

// Extract returns ctx carrying the remote span context of an incoming W3C
// traceparent header, which the call's span links to (StartCall).
func (t *Tracer) Extract(ctx context.Context, h http.Header) context.Context {
	if h.Get("Traceparent") == "" {
		return ctx
	}
	return t.prop.Extract(ctx, propagation.HeaderCarrier(h))
}

// StartCall starts the span of one tools/call as the root of a trace of
// the gateway's own, linked to the caller's span when the request carried
// a traceparent (Extract), whose trace id it returns as parent ("" when
// none). The gateway's trace id is its audit id: a caller that sends a
// traceparent names the parent of the call, never its id, so two calls
// never share one (OpenTelemetry's public-endpoint treatment of an
// incoming trace: a new root with a link).
func (t *Tracer) StartCall(ctx context.Context) (_ context.Context, _ trace.Span, parent string) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithNewRoot()}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
		parent = sc.TraceID().String()
	}
	ctx, span := t.tracer.Start(ctx, "tools/call", opts...)
	return ctx, span, parent
}

// NameCall names the call's span after its served tool.
func NameCall(span trace.Span, connector, tool string) {
	span.SetName("tools/call " + tool)
	span.SetAttributes(attribute.String("anvil.connector", connector), attribute.String("gen_ai.tool.name", tool))
}

// EndCall ends a call's span with its grant decision and error code.
func EndCall(span trace.Span, decision, code string) {
	span.SetAttributes(attribute.String("anvil.decision", decision))
	if code != "" {
		span.SetAttributes(attribute.String("error.type", code))
		span.SetStatus(codes.Error, code)
	}
	span.End()
}

// TraceID is the span's trace id as 32 lowercase hex digits.
func TraceID(span trace.Span) string { return span.SpanContext().TraceID().String() }

// StartUpstream starts the client span of an upstream exchange and writes
// its traceparent (and tracestate) into req's headers.
func (t *Tracer) StartUpstream(ctx context.Context, req *http.Request) trace.Span {
	_, span := t.tracer.Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.HTTPRequestMethodKey.String(req.Method), semconv.ServerAddress(req.URL.Hostname())))
	if req.Header == nil {
		req.Header = http.Header{}
	}
	t.prop.Inject(trace.ContextWithSpan(ctx, span), propagation.HeaderCarrier(req.Header))
	return span
}

// EndUpstream ends an upstream span with the answer's status (0 when none)
// and the error code of an exchange that failed.
func EndUpstream(span trace.Span, status int, code string) {
	if status > 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	}
	if code != "" {
		span.SetAttributes(attribute.String("error.type", code))
		span.SetStatus(codes.Error, code)
	} else if status >= 500 {
		span.SetStatus(codes.Error, "")
	}
	span.End()
}
