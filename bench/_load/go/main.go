// Command loadgen is bench/load's compiled generator process (--client go): the same
// steps as the Python generator (bench/_load/generator.py), at a fraction of its CPU per
// call. It reads one step (JSON) a line on stdin and writes what it measured (JSON) a line
// on stdout, until stdin closes.
//
// Times: a step's start comes as a delay from when bench/load handed it out (the pipe
// takes microseconds); every figure sent back is a duration, so no clock is shared.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	waitSeconds = 30               // the server-side wait of WaitTask / RunTask
	callTimeout = 40 * time.Second // each call's own deadline, past the wait
)

// job mirrors bench/_load/plan.py's Job, with start_at given as a delay.
type job struct {
	Kind     string  `json:"kind"`
	Delay    float64 `json:"delay"`
	Duration float64 `json:"duration"`
	Warmup   float64 `json:"warmup"`
	MaxTasks int     `json:"max_tasks"`
	Inflight int     `json:"inflight"`
	Rate     float64 `json:"rate"`
	Index    int     `json:"index"`
	Of       int     `json:"of"`
	Drain    float64 `json:"drain"`
}

// outcome mirrors bench/_load/plan.py's Outcome.
type outcome struct {
	Sent        int       `json:"sent"`
	Counted     int       `json:"counted"`
	LatenciesMs []float64 `json:"latencies_ms"`
	Errors      int       `json:"errors"`
	Unfinished  int       `json:"unfinished"`
	Window      float64   `json:"window"`
	LagsMs      []float64 `json:"lags_ms"`
	CPUSeconds  float64   `json:"cpu_seconds"`
	FirstError  string    `json:"first_error"`
}

type record struct {
	scheduled, end time.Time
	ok             bool
	why            string
}

type generator struct {
	stubs []taskyardv1.TaskServiceClient
	turn  atomic.Uint64
	mode  string
	spec  *taskyardv1.TaskSpec
}

func (g *generator) one() (bool, string) {
	stub := g.stubs[g.turn.Add(1)%uint64(len(g.stubs))]
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	wait := durationpb.New(waitSeconds * time.Second)
	var task *taskyardv1.Task
	if g.mode == "runtask" {
		reply, err := stub.RunTask(ctx, &taskyardv1.RunTaskRequest{Task: g.spec, Timeout: wait})
		if err != nil {
			return false, err.Error()
		}
		if !reply.GetFinal() {
			return false, fmt.Sprintf("task %s not final after %d s", reply.GetTask().GetId(), waitSeconds)
		}
		task = reply.GetTask()
	} else {
		sub, err := stub.SubmitTask(ctx, &taskyardv1.SubmitTaskRequest{Task: g.spec})
		if err != nil {
			return false, err.Error()
		}
		reply, err := stub.WaitTask(ctx, &taskyardv1.WaitTaskRequest{Id: sub.GetTask().GetId(), Timeout: wait})
		if err != nil {
			return false, err.Error()
		}
		if reply.GetTimedOut() {
			return false, fmt.Sprintf("task %s not final after %d s", sub.GetTask().GetId(), waitSeconds)
		}
		task = reply.GetTask()
	}
	if task.GetState() != taskyardv1.TaskState_TASK_STATE_SUCCESS {
		return false, fmt.Sprintf("task %s ended %s", task.GetId(), task.GetState())
	}
	return true, ""
}

func cpuSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return math.NaN()
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds()
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (g *generator) run(j job) outcome {
	cpu0 := cpuSeconds()
	start := time.Now().Add(seconds(j.Delay))
	countedFrom := start.Add(seconds(j.Warmup))
	var (
		mu      sync.Mutex
		records []record
		lags    []float64
		sent    int
		bounded bool
		out     sync.WaitGroup
	)
	launch := func(scheduled time.Time) {
		out.Add(1)
		go func() {
			defer out.Done()
			ok, why := g.one()
			end := time.Now()
			mu.Lock()
			records = append(records, record{scheduled, end, ok, why})
			mu.Unlock()
		}()
	}
	if j.Kind == "open" {
		if j.Rate <= 0 {
			fail("an open step needs a rate above 0")
		}
		for i := j.Index; sent < j.MaxTasks; i += j.Of {
			offset := float64(i) / j.Rate
			if offset >= j.Duration {
				break
			}
			t := start.Add(seconds(offset))
			time.Sleep(time.Until(t))
			now := time.Now()
			launch(t)
			sent++
			if !t.Before(countedFrom) {
				lags = append(lags, float64(now.Sub(t))/1e6)
			}
		}
	} else {
		time.Sleep(time.Until(start))
		stop := start.Add(seconds(j.Duration))
		var budget atomic.Int64
		budget.Store(int64(j.MaxTasks))
		var loops sync.WaitGroup
		var hitBound atomic.Bool
		var count atomic.Int64
		for range j.Inflight {
			loops.Add(1)
			go func() {
				defer loops.Done()
				for time.Now().Before(stop) {
					if budget.Add(-1) < 0 {
						hitBound.Store(true)
						return
					}
					count.Add(1)
					scheduled := time.Now()
					ok, why := g.one()
					end := time.Now()
					mu.Lock()
					records = append(records, record{scheduled, end, ok, why})
					mu.Unlock()
				}
			}()
		}
		loops.Wait()
		sent = int(count.Load())
		bounded = hitBound.Load()
	}
	drained := make(chan struct{})
	go func() { out.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(seconds(j.Drain)):
	}
	mu.Lock()
	done := append([]record(nil), records...)
	mu.Unlock()

	o := outcome{Sent: sent, Unfinished: sent - len(done), LagsMs: lags, LatenciesMs: []float64{}}
	if o.LagsMs == nil {
		o.LagsMs = []float64{}
	}
	var window []record
	if j.Kind == "open" {
		for _, r := range done {
			if !r.scheduled.Before(countedFrom) {
				window = append(window, r)
			}
		}
		o.Counted = len(lags)
		o.Window = j.Duration - j.Warmup
	} else {
		stopped := start.Add(seconds(j.Duration))
		if bounded && len(done) > 0 {
			stopped = done[0].end
			for _, r := range done {
				if r.end.After(stopped) {
					stopped = r.end
				}
			}
			stopped = stopped.Add(time.Nanosecond)
		}
		from := countedFrom
		if !stopped.After(from) {
			from = start
		}
		for _, r := range done {
			if !r.end.Before(from) && r.end.Before(stopped) {
				window = append(window, r)
			}
		}
		o.Counted = len(window)
		o.Window = stopped.Sub(from).Seconds()
	}
	for _, r := range window {
		if r.ok {
			o.LatenciesMs = append(o.LatenciesMs, float64(r.end.Sub(r.scheduled))/1e6)
		}
	}
	for _, r := range done {
		if !r.ok {
			o.Errors++
			if o.FirstError == "" {
				o.FirstError = r.why
			}
		}
	}
	o.CPUSeconds = cpuSeconds() - cpu0
	return o
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "loadgen:", message)
	os.Exit(2)
}

func main() {
	target := flag.String("target", "", "the gateway's host:port")
	channels := flag.Int("channels", 2, "gRPC connections")
	mode := flag.String("mode", "submit", "submit (SubmitTask then WaitTask) or runtask")
	flag.Parse()
	if *target == "" || *channels < 1 || (*mode != "submit" && *mode != "runtask") {
		fail("usage: loadgen -target HOST:PORT [-channels N] [-mode submit|runtask]")
	}
	g := &generator{mode: *mode, spec: &taskyardv1.TaskSpec{Name: "noop"}}
	for range *channels {
		conn, err := grpc.NewClient(*target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			fail(err.Error())
		}
		defer conn.Close()
		g.stubs = append(g.stubs, taskyardv1.NewTaskServiceClient(conn))
	}
	in := bufio.NewScanner(os.Stdin)
	encoder := json.NewEncoder(os.Stdout)
	if err := encoder.Encode("ready"); err != nil {
		fail(err.Error())
	}
	for in.Scan() {
		var j job
		if err := json.Unmarshal(in.Bytes(), &j); err != nil {
			fail(err.Error())
		}
		if err := encoder.Encode(g.run(j)); err != nil {
			fail(err.Error())
		}
	}
}
