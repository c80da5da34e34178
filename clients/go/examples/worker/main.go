// Command worker runs the task "greet" (greet("gopher") returns "hello,
// gopher") for a Taskyard gateway until SIGTERM or Ctrl-C, which drain it: no
// new attempts, the running ones finish.
//
// It reads TASKYARD_TARGET (default localhost:50051) and TASKYARD_TOKEN (its
// scopes: work), and speaks plaintext only to a loopback target. Once the
// gateway welcomed it, it prints "ready <worker id>"; once drained, "drained".
// With OTEL_EXPORTER_OTLP_ENDPOINT set, each attempt's span "process greet"
// (in the task's trace) is exported over OTLP/HTTP.
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"strings"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"github.com/taskyard/taskyard/clients/go/worker"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("drained") // the running attempts finished and reported
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
				fmt.Fprintln(os.Stderr, "worker: exporting spans:", err)
			}
		}()
		otel.SetTracerProvider(tp) // worker.New takes the global provider
	}
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

	w, err := worker.New(client, worker.Config{Slots: 4})
	if err != nil {
		return err
	}
	err = w.Register("greet", func(_ context.Context, t *worker.Task) (any, error) {
		var name string
		if err := t.DecodeArg(0, &name); err != nil {
			return nil, worker.Fatal(err) // a bad argument fails the same way every time
		}
		t.Log("info", "greeting "+name)
		return "hello, " + name, nil
	}, worker.WithMaxRetries(3))
	if err != nil {
		return err
	}
	w.OnReady(func(id string) { fmt.Println("ready", id) })
	return w.RunUntilSignal(ctx)
}

func tracerProvider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	// The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (and the other OTLP variables) itself.
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	// A name of its own unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) gives one:
	// later options win, so the environment comes last.
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "taskyard-go-worker-example")),
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
