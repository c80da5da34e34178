package dev.taskyard.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Follow what happens in the suite as it happens, and pick up where you left off.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class EventServiceGrpc {

  private EventServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "taskyard.v1.EventService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.WatchEventsRequest,
      dev.taskyard.v1.WatchEventsResponse> getWatchEventsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "WatchEvents",
      requestType = dev.taskyard.v1.WatchEventsRequest.class,
      responseType = dev.taskyard.v1.WatchEventsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.WatchEventsRequest,
      dev.taskyard.v1.WatchEventsResponse> getWatchEventsMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.WatchEventsRequest, dev.taskyard.v1.WatchEventsResponse> getWatchEventsMethod;
    if ((getWatchEventsMethod = EventServiceGrpc.getWatchEventsMethod) == null) {
      synchronized (EventServiceGrpc.class) {
        if ((getWatchEventsMethod = EventServiceGrpc.getWatchEventsMethod) == null) {
          EventServiceGrpc.getWatchEventsMethod = getWatchEventsMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.WatchEventsRequest, dev.taskyard.v1.WatchEventsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "WatchEvents"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.WatchEventsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.WatchEventsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new EventServiceMethodDescriptorSupplier("WatchEvents"))
              .build();
        }
      }
    }
    return getWatchEventsMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static EventServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<EventServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<EventServiceStub>() {
        @java.lang.Override
        public EventServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new EventServiceStub(channel, callOptions);
        }
      };
    return EventServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static EventServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<EventServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<EventServiceBlockingV2Stub>() {
        @java.lang.Override
        public EventServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new EventServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return EventServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static EventServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<EventServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<EventServiceBlockingStub>() {
        @java.lang.Override
        public EventServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new EventServiceBlockingStub(channel, callOptions);
        }
      };
    return EventServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static EventServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<EventServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<EventServiceFutureStub>() {
        @java.lang.Override
        public EventServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new EventServiceFutureStub(channel, callOptions);
        }
      };
    return EventServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Follow what happens in the suite as it happens, and pick up where you left off.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Events in log order: task state changes, worker and pool lifecycle,
     * queue pauses, schedule runs. Log order is by the transaction that wrote an
     * event (transaction id, given when it began writing), then the order within
     * it; an event is delivered once every transaction that began before its own
     * has ended, so nothing can later appear before it. Each carries a cursor;
     * a call with `after` set to the last cursor received continues exactly
     * after it, with nothing missed and nothing repeated (what the live stream
     * no longer holds is replayed from the store). A consumer that falls too far
     * behind is cut off with RESOURCE_EXHAUSTED (ErrorInfo reason
     * CONSUMER_TOO_SLOW, metadata "cursor": the last cursor delivered), never
     * slowing the suite; a cursor older than the store keeps fails with
     * OUT_OF_RANGE (reason CURSOR_EXPIRED).
     * </pre>
     */
    default void watchEvents(dev.taskyard.v1.WatchEventsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.WatchEventsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWatchEventsMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service EventService.
   * <pre>
   * Follow what happens in the suite as it happens, and pick up where you left off.
   * </pre>
   */
  public static abstract class EventServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return EventServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service EventService.
   * <pre>
   * Follow what happens in the suite as it happens, and pick up where you left off.
   * </pre>
   */
  public static final class EventServiceStub
      extends io.grpc.stub.AbstractAsyncStub<EventServiceStub> {
    private EventServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected EventServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new EventServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Events in log order: task state changes, worker and pool lifecycle,
     * queue pauses, schedule runs. Log order is by the transaction that wrote an
     * event (transaction id, given when it began writing), then the order within
     * it; an event is delivered once every transaction that began before its own
     * has ended, so nothing can later appear before it. Each carries a cursor;
     * a call with `after` set to the last cursor received continues exactly
     * after it, with nothing missed and nothing repeated (what the live stream
     * no longer holds is replayed from the store). A consumer that falls too far
     * behind is cut off with RESOURCE_EXHAUSTED (ErrorInfo reason
     * CONSUMER_TOO_SLOW, metadata "cursor": the last cursor delivered), never
     * slowing the suite; a cursor older than the store keeps fails with
     * OUT_OF_RANGE (reason CURSOR_EXPIRED).
     * </pre>
     */
    public void watchEvents(dev.taskyard.v1.WatchEventsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.WatchEventsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getWatchEventsMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service EventService.
   * <pre>
   * Follow what happens in the suite as it happens, and pick up where you left off.
   * </pre>
   */
  public static final class EventServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<EventServiceBlockingV2Stub> {
    private EventServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected EventServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new EventServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Events in log order: task state changes, worker and pool lifecycle,
     * queue pauses, schedule runs. Log order is by the transaction that wrote an
     * event (transaction id, given when it began writing), then the order within
     * it; an event is delivered once every transaction that began before its own
     * has ended, so nothing can later appear before it. Each carries a cursor;
     * a call with `after` set to the last cursor received continues exactly
     * after it, with nothing missed and nothing repeated (what the live stream
     * no longer holds is replayed from the store). A consumer that falls too far
     * behind is cut off with RESOURCE_EXHAUSTED (ErrorInfo reason
     * CONSUMER_TOO_SLOW, metadata "cursor": the last cursor delivered), never
     * slowing the suite; a cursor older than the store keeps fails with
     * OUT_OF_RANGE (reason CURSOR_EXPIRED).
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.taskyard.v1.WatchEventsResponse>
        watchEvents(dev.taskyard.v1.WatchEventsRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getWatchEventsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service EventService.
   * <pre>
   * Follow what happens in the suite as it happens, and pick up where you left off.
   * </pre>
   */
  public static final class EventServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<EventServiceBlockingStub> {
    private EventServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected EventServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new EventServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Events in log order: task state changes, worker and pool lifecycle,
     * queue pauses, schedule runs. Log order is by the transaction that wrote an
     * event (transaction id, given when it began writing), then the order within
     * it; an event is delivered once every transaction that began before its own
     * has ended, so nothing can later appear before it. Each carries a cursor;
     * a call with `after` set to the last cursor received continues exactly
     * after it, with nothing missed and nothing repeated (what the live stream
     * no longer holds is replayed from the store). A consumer that falls too far
     * behind is cut off with RESOURCE_EXHAUSTED (ErrorInfo reason
     * CONSUMER_TOO_SLOW, metadata "cursor": the last cursor delivered), never
     * slowing the suite; a cursor older than the store keeps fails with
     * OUT_OF_RANGE (reason CURSOR_EXPIRED).
     * </pre>
     */
    public java.util.Iterator<dev.taskyard.v1.WatchEventsResponse> watchEvents(
        dev.taskyard.v1.WatchEventsRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getWatchEventsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service EventService.
   * <pre>
   * Follow what happens in the suite as it happens, and pick up where you left off.
   * </pre>
   */
  public static final class EventServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<EventServiceFutureStub> {
    private EventServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected EventServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new EventServiceFutureStub(channel, callOptions);
    }
  }

  private static final int METHODID_WATCH_EVENTS = 0;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_WATCH_EVENTS:
          serviceImpl.watchEvents((dev.taskyard.v1.WatchEventsRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.WatchEventsResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getWatchEventsMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.taskyard.v1.WatchEventsRequest,
              dev.taskyard.v1.WatchEventsResponse>(
                service, METHODID_WATCH_EVENTS)))
        .build();
  }

  private static abstract class EventServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    EventServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.taskyard.v1.EventServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("EventService");
    }
  }

  private static final class EventServiceFileDescriptorSupplier
      extends EventServiceBaseDescriptorSupplier {
    EventServiceFileDescriptorSupplier() {}
  }

  private static final class EventServiceMethodDescriptorSupplier
      extends EventServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    EventServiceMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (EventServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new EventServiceFileDescriptorSupplier())
              .addMethod(getWatchEventsMethod())
              .build();
        }
      }
    }
    return result;
  }
}
