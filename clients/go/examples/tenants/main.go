// Command tenants makes a tenant with an operator's token, runs add(2, 3) as
// that tenant and reads the tenant back: the README's Tenants section, run.
//
//	go run ./tenants acme
//
// It reads TASKYARD_TARGET (default localhost:50051) and TASKYARD_TOKEN (an
// operator's: no tenant= in the gateway's tokens file), and speaks plaintext
// only to a loopback target.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tenants NAME")
		os.Exit(2)
	}
	target := os.Getenv("TASKYARD_TARGET")
	if target == "" {
		target = "localhost:50051"
	}
	opts := []taskyard.Option{taskyard.WithToken(os.Getenv("TASKYARD_TOKEN"))}
	if isLoopback(target) {
		opts = append(opts, taskyard.WithInsecure())
	}
	if err := run(context.Background(), target, opts, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "tenants:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, target string, opts []taskyard.Option, name string) error {
	c, err := taskyard.New(target, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	return tenant(ctx, c, target, opts, name)
}

// tenant makes the tenant name with c, a client of an operator's token (target
// and opts are how c was made), runs add(2, 3) as it and reads it back.
func tenant(ctx context.Context, c *taskyard.Client, target string, opts []taskyard.Option, name string) error {
	if _, err := c.Tenants().Create(ctx, taskyard.Tenant{
		Name:           name,
		MaxConcurrency: 50,
		Rate:           &taskyard.RateLimit{Units: 100, Period: time.Second},
		Weight:         2,
	}); err != nil {
		return err
	}
	for t, err := range c.Tenants().All(ctx, taskyard.TenantListOptions{}) {
		if err != nil {
			return err
		}
		fmt.Println("listed", t.Name, t.State)
	}
	// While suspended, its submissions fail with ErrTenantSuspended.
	suspended, err := c.Tenants().Suspend(ctx, name, "invoice overdue")
	if err != nil {
		return err
	}
	fmt.Println("suspended", suspended.Name, suspended.State)
	resumed, err := c.Tenants().Resume(ctx, name)
	if err != nil {
		return err
	}
	fmt.Println("resumed", resumed.Name, resumed.State)

	// The operator's token acting as the tenant: every call is the tenant's.
	as, err := taskyard.New(target, append(opts, taskyard.WithTenant(name))...)
	if err != nil {
		return err
	}
	defer as.Close()
	s, err := as.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{2, 3}})
	if err != nil {
		return err
	}
	task, timedOut, err := as.Wait(ctx, s.ID, 30*time.Second)
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
	fmt.Println("add(2, 3) ->", sum, "as", task.Tenant)

	got, err := c.Tenants().Get(ctx, name)
	if err != nil {
		return err
	}
	fmt.Println("got", got.Name, got.State, "max concurrency", got.MaxConcurrency, "weight", got.Weight)
	return nil
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
