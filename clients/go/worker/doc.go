// Package worker runs Taskyard tasks in Go: it registers functions by task
// name and runs their attempts over the gateway's public worker protocol
// (taskyard.worker.v1.WorkerService, docs/worker-protocol.md). To the suite a
// worker is a pool: priorities, fair share, limits, retries and fencing apply
// to it as to a Python pool.
//
//	client, err := taskyard.New("gateway:50051", taskyard.WithToken(token)) // scopes work (and submit for children)
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer client.Close()
//	w, err := worker.New(client, worker.Config{Slots: 8})
//	if err != nil {
//		log.Fatal(err)
//	}
//	err = w.Register("resize", func(ctx context.Context, t *worker.Task) (any, error) {
//		var url string
//		if err := t.DecodeArg(0, &url); err != nil {
//			return nil, worker.Fatal(err) // retrying would not help
//		}
//		t.Log("info", "resizing "+url)
//		return resize(ctx, url) // stops when ctx ends (cancel, revoke, timeout)
//	}, worker.WithTimeout(time.Minute), worker.WithMaxRetries(3))
//	if err != nil {
//		log.Fatal(err)
//	}
//	if err := w.RunUntilSignal(context.Background()); err != nil { // SIGTERM drains
//		log.Fatal(err)
//	}
//
// A function's error fails the attempt, which is retried with the suite's
// backoff while the task has retries left; [Fatal] makes it final,
// [RetryAfter] asks for a delay, [Errorf] gives the failure a type of its own.
// Its context ends when the task is cancelled (then the task ends CANCELLED
// whatever the function returns), when the attempt's lease is revoked, or at
// the attempt's deadline; context.Cause tells which.
//
// With an OpenTelemetry SDK installed, each attempt runs in a span "process
// <name>" (kind consumer) that continues the task's trace, and a child
// submitted with the function's ctx continues that span.
package worker
