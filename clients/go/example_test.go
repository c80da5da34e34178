package taskyard_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
)

func Example() {
	c, err := taskyard.New("localhost:50051", taskyard.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	s, err := c.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{2, 3}})
	if err != nil {
		log.Fatal(err)
	}
	task, _, err := c.Wait(ctx, s.ID, 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.State, task.Result)
}

func ExampleNew_tls() {
	ca, err := os.ReadFile("ca.pem")
	if err != nil {
		log.Fatal(err)
	}
	c, err := taskyard.New("gateway.example.com:50051",
		taskyard.WithCA(ca),
		taskyard.WithTLS(&tls.Config{ServerName: "gateway.internal"}),
		taskyard.WithToken(os.Getenv("TASKYARD_TOKEN")),
		taskyard.WithTimeout(10*time.Second),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}

func ExampleError() {
	var c *taskyard.Client // from taskyard.New
	_, err := c.SubmitBatch(context.Background(), []taskyard.Spec{{Name: "add"}, {Name: ""}})
	var terr *taskyard.Error
	if errors.As(err, &terr) {
		fmt.Println(terr.Code, terr.Reason)
		for _, v := range terr.Violations {
			fmt.Println(v.Field, v.Reason, v.Description)
		}
	}
	if errors.Is(err, taskyard.ErrTaskNotFound) {
		fmt.Println("no such task")
	}
}

func ExampleClient_Tasks() {
	var c *taskyard.Client // from taskyard.New
	opts := taskyard.ListOptions{States: []taskyard.State{taskyard.StateFailure}, Name: "fail", PageSize: 100}
	for task, err := range c.Tasks(context.Background(), opts) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(task.ID, task.Failure.Message)
	}
}

func ExampleLimits_Create() {
	var c *taskyard.Client // from taskyard.New, with a token of the admin scope
	ctx := context.Background()
	_, err := c.Limits().Create(ctx, taskyard.Limit{
		Name:        "per-customer",
		Concurrency: &taskyard.ConcurrencyLimit{MaxUnits: 3},
		PerKey:      true,
	})
	if err != nil {
		log.Fatal(err)
	}
	// At most 3 tasks of customer 42 leased or running at once; customer 42's tasks
	// share their lane fairly with other customers'.
	_, err = c.Submit(ctx, taskyard.Spec{
		Name:        "charge",
		Args:        []any{42},
		Limits:      []taskyard.LimitUse{{Limit: "per-customer", Key: "customer:42"}},
		FairnessKey: "customer:42",
	})
	if errors.Is(err, taskyard.ErrUnknownLimit) {
		fmt.Println("no such limit")
	}
}
