// Command add submits add(2, 3) to a Taskyard gateway and prints the result.
//
// It reads TASKYARD_TARGET (default localhost:50051) and TASKYARD_TOKEN, and
// speaks plaintext only to a loopback target. With OTEL_EXPORTER_OTLP_ENDPOINT
// set, it traces the submit and the wait in a span "add-example", exported over
// OTLP/HTTP, and prints the trace id on stderr.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "add:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" {
		tp, err := tracerProvider(ctx)
		if err != nil {
			return err
		}
		// Shut down even on error, so the spans are exported before exit.
		defer func() {
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := tp.Shutdown(shutdownCtx); err != nil {
				fmt.Fprintln(os.Stderr, "add: exporting spans:", err)
			}
		}()
		var span trace.Span
		ctx, span = tp.Tracer("taskyard-example").Start(ctx, "add-example")
		defer span.End()
		fmt.Fprintf(os.Stderr, "trace_id=%s\n", span.SpanContext().TraceID())
	}
	return add(ctx)
}

func add(ctx context.Context) error {
	target := os.Getenv("TASKYARD_TARGET")
	if target == "" {
		target = "localhost:50051"
	}
	var opts []taskyard.Option
	if isLoopback(target) {
		opts = append(opts, taskyard.WithInsecure())
	}
	if token := os.Getenv("TASKYARD_TOKEN"); token != "" {
		opts = append(opts, taskyard.WithToken(token))
	}
	client, err := taskyard.New(target, opts...)
	if err != nil {
		return err
	}
	defer client.Close()

	submitted, err := client.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{2, 3}})
	if err != nil {
		return err
	}
	task, timedOut, err := client.Wait(ctx, submitted.ID, 30*time.Second)
	if err != nil {
		return err
	}
	if timedOut || task.State != taskyard.StateSuccess {
		return fmt.Errorf("task %s ended %s (timed out: %v)", task.ID, task.State, timedOut)
	}
	var sum int
	if err := task.DecodeResult(&sum); err != nil {
		return err
	}
	fmt.Println(sum)
	return nil
}

func tracerProvider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	// The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (and the other OTLP
	// variables) itself.
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	// A name of its own unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) gives one:
	// later options win, so the environment comes last.
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "taskyard-go-example")),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res)), nil
}

func isLoopback(target string) bool {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
