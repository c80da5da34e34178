package taskyard

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// The W3C propagator itself rather than otel.GetTextMapPropagator(): the
// global one is a no-op until an SDK installs another, and the gateway
// continues the caller's trace only if traceparent arrives.
var traceContext = propagation.TraceContext{}

// withTraceContext adds traceparent (and tracestate) of ctx's span to the
// outgoing metadata. Without a valid span, or when an instrumentation such as
// otelgrpc has already set traceparent, ctx is returned as it is.
func withTraceContext(ctx context.Context) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	if len(md.Get("traceparent")) > 0 {
		return ctx
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	kv := make([]string, 0, 2*len(carrier))
	for k, v := range carrier {
		kv = append(kv, k, v)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

func traceUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(withTraceContext(ctx), method, req, reply, cc, opts...)
}

func traceStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(withTraceContext(ctx), desc, cc, method, opts...)
}
