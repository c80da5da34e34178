package worker

import (
	"testing"

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

	go r.started(ref("a"))
	first := <-sending // a's start is on its way; b and c queue behind it
	r.outcome(&workerv1.Outcome{Ref: ref("b")})
	r.started(ref("c"))
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
