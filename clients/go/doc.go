// Package taskyard is the Go client of Taskyard, a distributed task queue.
//
// A Client talks gRPC to a Taskyard gateway: it submits tasks, reads them back,
// waits for their outcome, pages through them and cancels them.
//
//	c, err := taskyard.New("localhost:50051", taskyard.WithInsecure())
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer c.Close()
//	s, err := c.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{2, 3}})
//	if err != nil {
//		log.Fatal(err)
//	}
//	task, _, err := c.Wait(ctx, s.ID, 30*time.Second)
//
// Task arguments and results are JSON values: they are converted as
// encoding/json would (numbers come back as float64; see [Task.DecodeResult]).
//
// [Client.Limits] manages the limits (rate, concurrency and circuit breakers)
// and fairness weights of flow control;
// [Client.Failures] lists dead letters (tasks whose failure is final) by
// failure group and redrives them at a bounded rate, with an audit.
//
// A failed call returns an *[Error], which carries the gRPC code and the
// reason and field violations the gateway gave.
package taskyard
