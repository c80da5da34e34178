package worker

import (
	"strings"
	"testing"
	"time"

	workerv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/worker/v1"
)

func TestReportsQueuedDuringASendGoTogether(t *testing.T) {
	sending := make(chan *workerv1.Reports)
	release := make(chan struct{})
	idle := make(chan struct{}, 1)
	r := &reports{
		send: func(b *workerv1.Reports) {
			sending <- b
			<-release
		},
		idle: func() { idle <- struct{}{} },
	}
	ref := func(id string) *workerv1.AttemptRef { return &workerv1.AttemptRef{TaskId: id, Attempt: 1} }

	go r.addStarted(ref("a"))
	first := <-sending // a's start is on its way; b and c queue behind it
	r.addOutcome(&workerv1.Outcome{Ref: ref("b")})
	r.addStarted(ref("c"))
	if r.sent() {
		t.Fatal("sent() while a send is in flight")
	}
	release <- struct{}{}
	second := <-sending
	release <- struct{}{}

	if len(first.GetStarted()) != 1 || first.GetStarted()[0].GetRef().GetTaskId() != "a" || len(first.GetOutcomes()) != 0 {
		t.Fatalf("first = %v", first)
	}
	if len(second.GetOutcomes()) != 1 || second.GetOutcomes()[0].GetRef().GetTaskId() != "b" ||
		len(second.GetStarted()) != 1 || second.GetStarted()[0].GetRef().GetTaskId() != "c" {
		t.Fatalf("second = %v", second)
	}
	<-idle // the sender left: nothing was queued after c
	if !r.sent() {
		t.Fatal("not sent() after the last send")
	}
}

func TestReportsSplitPastTheSizeLimit(t *testing.T) {
	var sent []*workerv1.Reports
	r := &reports{send: func(b *workerv1.Reports) { sent = append(sent, b) }}
	big := func(id string) *workerv1.Outcome {
		return &workerv1.Outcome{
			Ref:     &workerv1.AttemptRef{TaskId: id, Attempt: 1},
			Outcome: &workerv1.Outcome_Failure{Failure: &workerv1.Failure{Message: strings.Repeat("x", 1000)}},
		}
	}
	r.limit = 2500 // two such outcomes, not three
	r.mu.Lock()
	r.outcomes = append(r.outcomes, big("a"), big("b"), big("c"))
	r.started = append(r.started, &workerv1.Started{Ref: &workerv1.AttemptRef{TaskId: "c", Attempt: 1}})
	r.flush()
	if len(sent) != 2 {
		t.Fatalf("%d messages, want 2", len(sent))
	}
	if len(sent[0].GetStarted()) != 1 || len(sent[0].GetOutcomes()) != 2 || len(sent[1].GetOutcomes()) != 1 {
		t.Fatalf("split as %d+%d and %d+%d, want the start and two outcomes, then one",
			len(sent[0].GetStarted()), len(sent[0].GetOutcomes()), len(sent[1].GetStarted()), len(sent[1].GetOutcomes()))
	}
	if !r.sent() {
		t.Fatal("not sent() after the flush")
	}
}

func TestAReportWaitsForTheOthersRunningOnlyWhileTheyRun(t *testing.T) {
	sent := make(chan *workerv1.Reports, 4)
	running := 2
	r := &reports{
		send:    func(b *workerv1.Reports) { sent <- b },
		running: func() int { return running },
		linger:  time.Hour, // never, here: only the last outcome may send
	}
	ref := func(id string) *workerv1.AttemptRef { return &workerv1.AttemptRef{TaskId: id, Attempt: 1} }
	r.addOutcome(&workerv1.Outcome{Ref: ref("a")}) // b still runs: a waits
	if len(sent) != 0 || r.sent() {
		t.Fatal("a's outcome went while b was running")
	}
	r.addOutcome(&workerv1.Outcome{Ref: ref("b")}) // the last: both go now
	if got := <-sent; len(got.GetOutcomes()) != 2 {
		t.Fatalf("sent %v, want both outcomes", got)
	}
	if !r.sent() {
		t.Fatal("the linger still armed after the send")
	}
	running = 1
	r.addStarted(ref("c")) // alone: at once
	if got := <-sent; len(got.GetStarted()) != 1 {
		t.Fatalf("sent %v, want c's start", got)
	}
}
