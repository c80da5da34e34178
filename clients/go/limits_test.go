package taskyard

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// fakeLimits keeps limits by name and weights by key, as the gateway would,
// and serves ListLimits one limit a page.
type fakeLimits struct {
	taskyardv1.UnimplementedLimitServiceServer
	mu       sync.Mutex
	limits   map[string]*taskyardv1.Limit
	weights  []*taskyardv1.KeyWeight
	deletes  []*taskyardv1.DeleteLimitRequest
	getCalls int
}

func (f *fakeLimits) CreateLimit(_ context.Context, req *taskyardv1.CreateLimitRequest) (*taskyardv1.CreateLimitResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.limits[req.GetLimit().GetName()]; ok {
		return nil, status.Error(codes.AlreadyExists, "taken")
	}
	f.limits[req.GetLimit().GetName()] = req.GetLimit()
	return &taskyardv1.CreateLimitResponse{Limit: req.GetLimit()}, nil
}

func (f *fakeLimits) GetLimit(_ context.Context, req *taskyardv1.GetLimitRequest) (*taskyardv1.GetLimitResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.getCalls++
	l, ok := f.limits[req.GetName()]
	if !ok {
		st, _ := status.New(codes.NotFound, "no limit named "+req.GetName()).
			WithDetails(&errdetails.ErrorInfo{Reason: "LIMIT_NOT_FOUND", Domain: Domain})
		return nil, st.Err()
	}
	out := proto.Clone(l).(*taskyardv1.Limit)
	out.Usage = &taskyardv1.LimitUsage{UnitsInUse: 2, Waiting: 5, Keys: 1, BusiestKeys: []*taskyardv1.KeyUsage{{Key: "customer:42", UnitsInUse: 2, Waiting: 5}}}
	return &taskyardv1.GetLimitResponse{Limit: out}, nil
}

// ListLimits pages by name, one limit a page; the token is the next name.
func (f *fakeLimits) ListLimits(_ context.Context, req *taskyardv1.ListLimitsRequest) (*taskyardv1.ListLimitsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for name := range f.limits {
		if name >= req.GetPageToken() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	resp := &taskyardv1.ListLimitsResponse{}
	if len(names) > 0 {
		resp.Limits = []*taskyardv1.Limit{f.limits[names[0]]}
	}
	if len(names) > 1 {
		resp.NextPageToken = names[1]
	}
	return resp, nil
}

func (f *fakeLimits) UpdateLimit(_ context.Context, req *taskyardv1.UpdateLimitRequest) (*taskyardv1.UpdateLimitResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.limits[req.GetLimit().GetName()]; !ok {
		return nil, status.Error(codes.NotFound, "none")
	}
	f.limits[req.GetLimit().GetName()] = req.GetLimit()
	return &taskyardv1.UpdateLimitResponse{Limit: req.GetLimit()}, nil
}

func (f *fakeLimits) DeleteLimit(_ context.Context, req *taskyardv1.DeleteLimitRequest) (*taskyardv1.DeleteLimitResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes = append(f.deletes, req)
	if !req.GetForce() {
		return nil, status.Error(codes.FailedPrecondition, "3 tasks use it")
	}
	delete(f.limits, req.GetName())
	return &taskyardv1.DeleteLimitResponse{TasksReleased: 3}, nil
}

func (f *fakeLimits) SetKeyWeight(_ context.Context, req *taskyardv1.SetKeyWeightRequest) (*taskyardv1.SetKeyWeightResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.weights = append(f.weights, req.GetWeight())
	return &taskyardv1.SetKeyWeightResponse{Weight: req.GetWeight()}, nil
}

func (f *fakeLimits) ListKeyWeights(context.Context, *taskyardv1.ListKeyWeightsRequest) (*taskyardv1.ListKeyWeightsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &taskyardv1.ListKeyWeightsResponse{Weights: f.weights}, nil
}

// echoTasks answers a submit with the task as the spec describes it.
type echoTasks struct {
	taskyardv1.UnimplementedTaskServiceServer
	spec *taskyardv1.TaskSpec
}

func (e *echoTasks) SubmitTask(_ context.Context, req *taskyardv1.SubmitTaskRequest) (*taskyardv1.SubmitTaskResponse, error) {
	e.spec = req.GetTask()
	task := &taskyardv1.Task{Id: "t1", Name: e.spec.GetName(), Limits: e.spec.GetLimits(), FairnessKey: e.spec.GetFairnessKey()}
	return &taskyardv1.SubmitTaskResponse{Task: task, Created: true}, nil
}

func startLimits(t *testing.T) (*Client, *fakeLimits) {
	t.Helper()
	f := &fakeLimits{limits: map[string]*taskyardv1.Limit{}}
	return startServer(t, func(srv *grpc.Server) { taskyardv1.RegisterLimitServiceServer(srv, f) }), f
}

func TestSubmitSendsLimitUsesAndFairnessKey(t *testing.T) {
	e := &echoTasks{}
	c := startServer(t, func(srv *grpc.Server) { taskyardv1.RegisterTaskServiceServer(srv, e) })
	uses := []LimitUse{{Limit: "stripe", Key: "customer:42", Units: 2}, {Limit: "global"}}
	s, err := c.Submit(context.Background(), Spec{Name: "charge", Limits: uses, FairnessKey: "customer:42"})
	if err != nil {
		t.Fatal(err)
	}
	sent := e.spec.GetLimits()
	if len(sent) != 2 || sent[0].GetLimit() != "stripe" || sent[0].GetKey() != "customer:42" || sent[0].GetUnits() != 2 || sent[1].GetUnits() != 0 {
		t.Errorf("limits sent %v", sent)
	}
	if e.spec.GetFairnessKey() != "customer:42" {
		t.Errorf("fairness key sent %q", e.spec.GetFairnessKey())
	}
	if !slices.Equal(s.Limits, uses) || s.FairnessKey != "customer:42" {
		t.Errorf("task limits %v fairness key %q", s.Limits, s.FairnessKey)
	}
	if _, err := c.Submit(context.Background(), Spec{Name: "plain"}); err != nil {
		t.Fatal(err)
	}
	if e.spec.GetLimits() != nil || e.spec.GetFairnessKey() != "" {
		t.Errorf("a spec without flow control sent %v %q", e.spec.GetLimits(), e.spec.GetFairnessKey())
	}
}

func TestLimitsCreateGetUpdate(t *testing.T) {
	c, f := startLimits(t)
	ctx := context.Background()
	rate := Limit{Name: "stripe", Rate: &RateLimit{Units: 100, Period: time.Second, Burst: 20}, Description: "the API's quota"}
	if _, err := c.Limits().Create(ctx, rate); err != nil {
		t.Fatal(err)
	}
	stored := f.limits["stripe"]
	if r := stored.GetRate(); r.GetUnits() != 100 || !proto.Equal(r.GetPeriod(), durationpb.New(time.Second)) || r.GetBurst() != 20 || stored.GetDescription() != "the API's quota" {
		t.Fatalf("stored %v", stored)
	}
	perCustomer := Limit{Name: "per-customer", Concurrency: &ConcurrencyLimit{MaxUnits: 3}, PerKey: true}
	if _, err := c.Limits().Create(ctx, perCustomer); err != nil {
		t.Fatal(err)
	}
	got, err := c.Limits().Get(ctx, "per-customer")
	if err != nil {
		t.Fatal(err)
	}
	if got.Concurrency == nil || got.Concurrency.MaxUnits != 3 || !got.PerKey || got.Rate != nil {
		t.Errorf("got %+v", got)
	}
	if u := got.Usage; u == nil || u.UnitsInUse != 2 || u.Waiting != 5 || len(u.BusiestKeys) != 1 || u.BusiestKeys[0].Key != "customer:42" {
		t.Errorf("usage %+v", got.Usage)
	}
	rate.Rate.Units = 50
	updated, err := c.Limits().Update(ctx, rate)
	if err != nil || updated.Rate.Units != 50 || updated.Rate.Period != time.Second {
		t.Fatalf("Update = %+v, %v", updated, err)
	}
	_, err = c.Limits().Create(ctx, rate)
	if status.Code(err) != codes.AlreadyExists {
		t.Errorf("a second Create = %v, want ALREADY_EXISTS", err)
	}
}

func TestLimitsRefusesRateAndConcurrencyTogether(t *testing.T) {
	c, f := startLimits(t)
	both := Limit{Name: "x", Rate: &RateLimit{Units: 1, Period: time.Second}, Concurrency: &ConcurrencyLimit{MaxUnits: 1}}
	_, err := c.Limits().Create(context.Background(), both)
	var terr *Error
	if !errors.As(err, &terr) || terr.Code != codes.InvalidArgument {
		t.Fatalf("Create = %v, want INVALID_ARGUMENT", err)
	}
	if _, ok := terr.Violation("limit"); !ok || len(f.limits) != 0 {
		t.Errorf("violations %v, stored %v", terr.Violations, f.limits)
	}
}

func TestLimitsGetMapsErrors(t *testing.T) {
	c, _ := startLimits(t)
	_, err := c.Limits().Get(context.Background(), "nope")
	var terr *Error
	if !errors.As(err, &terr) || terr.Code != codes.NotFound || terr.Reason != "LIMIT_NOT_FOUND" || terr.Domain != Domain {
		t.Fatalf("Get = %v, want NOT_FOUND LIMIT_NOT_FOUND", err)
	}
}

func TestLimitsAllPagesThroughEveryLimit(t *testing.T) {
	c, f := startLimits(t)
	for _, name := range []string{"c", "a", "b"} {
		f.limits[name] = &taskyardv1.Limit{Name: name, Kind: &taskyardv1.Limit_Concurrency{Concurrency: &taskyardv1.ConcurrencyLimit{MaxUnits: 1}}}
	}
	page, err := c.Limits().List(context.Background(), LimitListOptions{PageSize: 1})
	if err != nil || len(page.Limits) != 1 || page.Limits[0].Name != "a" || page.NextPageToken != "b" {
		t.Fatalf("List = %+v, %v", page, err)
	}
	var names []string
	for l, err := range c.Limits().All(context.Background(), LimitListOptions{PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, l.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Errorf("All gave %v", names)
	}
	if _, err := c.Limits().List(context.Background(), LimitListOptions{PageSize: MaxPageSize + 1}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("List(PageSize over the most) = %v", err)
	}
}

func TestLimitsDeleteAndWeights(t *testing.T) {
	c, f := startLimits(t)
	ctx := context.Background()
	if _, err := c.Limits().Delete(ctx, "busy", DeleteLimitOptions{}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("Delete without force = %v, want FAILED_PRECONDITION", err)
	}
	released, err := c.Limits().Delete(ctx, "busy", DeleteLimitOptions{Force: true})
	if err != nil || released != 3 {
		t.Fatalf("Delete with force = %d, %v", released, err)
	}
	if len(f.deletes) != 2 || f.deletes[0].GetForce() || !f.deletes[1].GetForce() {
		t.Errorf("deletes sent %v", f.deletes)
	}
	w, err := c.Limits().SetKeyWeight(ctx, "customer:42", 3)
	if err != nil || w != (KeyWeight{Key: "customer:42", Weight: 3}) {
		t.Fatalf("SetKeyWeight = %+v, %v", w, err)
	}
	if _, err := c.Limits().SetKeyWeight(ctx, "k", -1); status.Code(err) != codes.InvalidArgument {
		t.Errorf("SetKeyWeight(-1) = %v, want INVALID_ARGUMENT before sending", err)
	}
	weights, err := c.Limits().KeyWeights(ctx)
	if err != nil || !slices.Equal(weights, []KeyWeight{{Key: "customer:42", Weight: 3}}) {
		t.Fatalf("KeyWeights = %v, %v", weights, err)
	}
}
