package worker

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	workerv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/worker/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/durationpb"
)

// waitFor bounds every wait of a test on the worker, so that a worker that
// never sends what a test expects fails the test instead of hanging it.
const waitFor = 10 * time.Second

const testToken = "good-token"

// fakeGateway is an in-process WorkerService (and the TaskService's
// SubmitTask, for child tasks): each Work stream is handed to the test, which
// plays the gateway's side message by message.
type fakeGateway struct {
	workerv1.UnimplementedWorkerServiceServer
	taskyardv1.UnimplementedTaskServiceServer

	streams chan *fakeStream

	mu       sync.Mutex
	submits  []*taskyardv1.SubmitTaskRequest
	submitMD []metadata.MD
}

// fakeStream is the gateway's end of one Work stream.
type fakeStream struct {
	t      *testing.T
	stream workerv1.WorkerService_WorkServer
	recv   chan *workerv1.WorkRequest // closed when the worker half-closed or left
	end    chan error                 // what Work returns: the stream's status
}

func (f *fakeGateway) Work(stream workerv1.WorkerService_WorkServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+testToken {
		return status.Error(codes.Unauthenticated, "token not valid")
	}
	fs := &fakeStream{stream: stream, recv: make(chan *workerv1.WorkRequest, 1000), end: make(chan error, 1)}
	go func() {
		defer close(fs.recv)
		for {
			msg, err := stream.Recv()
			if err != nil {
				return
			}
			// Reports are their parts, starts first, as the gateway reads them.
			if r := msg.GetReports(); r != nil {
				for _, started := range r.GetStarted() {
					fs.recv <- &workerv1.WorkRequest{Message: &workerv1.WorkRequest_Started{Started: started}}
				}
				for _, o := range r.GetOutcomes() {
					fs.recv <- &workerv1.WorkRequest{Message: &workerv1.WorkRequest_Outcome{Outcome: o}}
				}
				continue
			}
			fs.recv <- msg
		}
	}()
	f.streams <- fs
	select {
	case err := <-fs.end:
		return err
	case <-stream.Context().Done():
		return nil
	}
}

func (f *fakeGateway) SubmitTask(ctx context.Context, req *taskyardv1.SubmitTaskRequest) (*taskyardv1.SubmitTaskResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submits = append(f.submits, req)
	f.submitMD = append(f.submitMD, md)
	return &taskyardv1.SubmitTaskResponse{Task: &taskyardv1.Task{Id: "child-1", Name: req.GetTask().GetName()}, Created: true}, nil
}

// startGateway serves a fakeGateway over an in-memory listener and returns a
// client of it with token.
func startGateway(t *testing.T, token string) (*fakeGateway, *taskyard.Client) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	gw := &fakeGateway{streams: make(chan *fakeStream, 10)}
	workerv1.RegisterWorkerServiceServer(srv, gw)
	taskyardv1.RegisterTaskServiceServer(srv, gw)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	dialer := func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }
	// A loopback name, so that the token may go over the plaintext pipe.
	client, err := taskyard.New("passthrough:///localhost:1", taskyard.WithInsecure(), taskyard.WithToken(token),
		taskyard.WithDialOptions(grpc.WithContextDialer(dialer)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return gw, client
}

// running is a Worker's Run in the background.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, w *Worker) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
	})
	return r
}

// result waits for Run to return.
func (r *running) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-time.After(waitFor):
		t.Fatal("Run did not return")
		return nil
	}
}

// accept waits for the worker's next stream.
func (gw *fakeGateway) accept(t *testing.T) *fakeStream {
	t.Helper()
	select {
	case fs := <-gw.streams:
		fs.t = t
		return fs
	case <-time.After(waitFor):
		t.Fatal("the worker did not open a stream")
		return nil
	}
}

// welcome reads the Hello and answers a Welcome with workerID.
func (fs *fakeStream) welcome(workerID string, heartbeat time.Duration) *workerv1.Hello {
	fs.t.Helper()
	return fs.welcomeWith(&workerv1.Welcome{
		WorkerId: workerID, HeartbeatInterval: durationpb.New(heartbeat),
		MaxMessageBytes: 4 << 20, MaxResultBytes: 1 << 20,
	})
}

// welcomeWith reads the Hello and answers w.
func (fs *fakeStream) welcomeWith(w *workerv1.Welcome) *workerv1.Hello {
	fs.t.Helper()
	hello := fs.next().GetHello()
	if hello == nil {
		fs.t.Fatal("the first message is not a Hello")
	}
	fs.send(&workerv1.WorkResponse{Message: &workerv1.WorkResponse_Welcome{Welcome: w}})
	return hello
}

// next is the worker's next message other than a Heartbeat.
func (fs *fakeStream) next() *workerv1.WorkRequest {
	fs.t.Helper()
	for {
		msg := fs.nextAny()
		if msg == nil {
			fs.t.Fatal("the worker closed the stream")
		}
		if msg.GetHeartbeat() == nil {
			return msg
		}
	}
}

// nextAny is the worker's next message, nil once it half-closed.
func (fs *fakeStream) nextAny() *workerv1.WorkRequest {
	fs.t.Helper()
	select {
	case msg := <-fs.recv:
		return msg
	case <-time.After(waitFor):
		fs.t.Fatal("no message from the worker")
		return nil
	}
}

func (fs *fakeStream) send(msg *workerv1.WorkResponse) {
	fs.t.Helper()
	if err := fs.stream.Send(msg); err != nil {
		fs.t.Fatalf("send: %v", err)
	}
}

func (fs *fakeStream) attempts(as ...*workerv1.Attempt) {
	fs.t.Helper()
	fs.send(&workerv1.WorkResponse{Message: &workerv1.WorkResponse_Attempts{Attempts: &workerv1.Attempts{Attempts: as}}})
}

func ref(a *workerv1.Attempt) *workerv1.AttemptRef {
	return &workerv1.AttemptRef{TaskId: a.GetTaskId(), Attempt: a.GetAttempt(), LeaseToken: a.GetLeaseToken()}
}
