package dev.taskyard.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Operating queues and seeing the servers that run them (the seed's
 * `queue status|clear|retry|stats|servers`).
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class QueueServiceGrpc {

  private QueueServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "taskyard.v1.QueueService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.PauseQueueRequest,
      dev.taskyard.v1.PauseQueueResponse> getPauseQueueMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PauseQueue",
      requestType = dev.taskyard.v1.PauseQueueRequest.class,
      responseType = dev.taskyard.v1.PauseQueueResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.PauseQueueRequest,
      dev.taskyard.v1.PauseQueueResponse> getPauseQueueMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.PauseQueueRequest, dev.taskyard.v1.PauseQueueResponse> getPauseQueueMethod;
    if ((getPauseQueueMethod = QueueServiceGrpc.getPauseQueueMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getPauseQueueMethod = QueueServiceGrpc.getPauseQueueMethod) == null) {
          QueueServiceGrpc.getPauseQueueMethod = getPauseQueueMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.PauseQueueRequest, dev.taskyard.v1.PauseQueueResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PauseQueue"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PauseQueueRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PauseQueueResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("PauseQueue"))
              .build();
        }
      }
    }
    return getPauseQueueMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeQueueRequest,
      dev.taskyard.v1.ResumeQueueResponse> getResumeQueueMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ResumeQueue",
      requestType = dev.taskyard.v1.ResumeQueueRequest.class,
      responseType = dev.taskyard.v1.ResumeQueueResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeQueueRequest,
      dev.taskyard.v1.ResumeQueueResponse> getResumeQueueMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeQueueRequest, dev.taskyard.v1.ResumeQueueResponse> getResumeQueueMethod;
    if ((getResumeQueueMethod = QueueServiceGrpc.getResumeQueueMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getResumeQueueMethod = QueueServiceGrpc.getResumeQueueMethod) == null) {
          QueueServiceGrpc.getResumeQueueMethod = getResumeQueueMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ResumeQueueRequest, dev.taskyard.v1.ResumeQueueResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ResumeQueue"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ResumeQueueRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ResumeQueueResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("ResumeQueue"))
              .build();
        }
      }
    }
    return getResumeQueueMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ClearQueueRequest,
      dev.taskyard.v1.ClearQueueResponse> getClearQueueMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ClearQueue",
      requestType = dev.taskyard.v1.ClearQueueRequest.class,
      responseType = dev.taskyard.v1.ClearQueueResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ClearQueueRequest,
      dev.taskyard.v1.ClearQueueResponse> getClearQueueMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ClearQueueRequest, dev.taskyard.v1.ClearQueueResponse> getClearQueueMethod;
    if ((getClearQueueMethod = QueueServiceGrpc.getClearQueueMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getClearQueueMethod = QueueServiceGrpc.getClearQueueMethod) == null) {
          QueueServiceGrpc.getClearQueueMethod = getClearQueueMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ClearQueueRequest, dev.taskyard.v1.ClearQueueResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ClearQueue"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ClearQueueRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ClearQueueResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("ClearQueue"))
              .build();
        }
      }
    }
    return getClearQueueMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.RetryTasksRequest,
      dev.taskyard.v1.RetryTasksResponse> getRetryTasksMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RetryTasks",
      requestType = dev.taskyard.v1.RetryTasksRequest.class,
      responseType = dev.taskyard.v1.RetryTasksResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.RetryTasksRequest,
      dev.taskyard.v1.RetryTasksResponse> getRetryTasksMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.RetryTasksRequest, dev.taskyard.v1.RetryTasksResponse> getRetryTasksMethod;
    if ((getRetryTasksMethod = QueueServiceGrpc.getRetryTasksMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getRetryTasksMethod = QueueServiceGrpc.getRetryTasksMethod) == null) {
          QueueServiceGrpc.getRetryTasksMethod = getRetryTasksMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.RetryTasksRequest, dev.taskyard.v1.RetryTasksResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RetryTasks"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.RetryTasksRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.RetryTasksResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("RetryTasks"))
              .build();
        }
      }
    }
    return getRetryTasksMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.GetQueueStatusRequest,
      dev.taskyard.v1.GetQueueStatusResponse> getGetQueueStatusMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetQueueStatus",
      requestType = dev.taskyard.v1.GetQueueStatusRequest.class,
      responseType = dev.taskyard.v1.GetQueueStatusResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.GetQueueStatusRequest,
      dev.taskyard.v1.GetQueueStatusResponse> getGetQueueStatusMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.GetQueueStatusRequest, dev.taskyard.v1.GetQueueStatusResponse> getGetQueueStatusMethod;
    if ((getGetQueueStatusMethod = QueueServiceGrpc.getGetQueueStatusMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getGetQueueStatusMethod = QueueServiceGrpc.getGetQueueStatusMethod) == null) {
          QueueServiceGrpc.getGetQueueStatusMethod = getGetQueueStatusMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.GetQueueStatusRequest, dev.taskyard.v1.GetQueueStatusResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetQueueStatus"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetQueueStatusRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetQueueStatusResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("GetQueueStatus"))
              .build();
        }
      }
    }
    return getGetQueueStatusMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListServersRequest,
      dev.taskyard.v1.ListServersResponse> getListServersMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListServers",
      requestType = dev.taskyard.v1.ListServersRequest.class,
      responseType = dev.taskyard.v1.ListServersResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListServersRequest,
      dev.taskyard.v1.ListServersResponse> getListServersMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListServersRequest, dev.taskyard.v1.ListServersResponse> getListServersMethod;
    if ((getListServersMethod = QueueServiceGrpc.getListServersMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getListServersMethod = QueueServiceGrpc.getListServersMethod) == null) {
          QueueServiceGrpc.getListServersMethod = getListServersMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListServersRequest, dev.taskyard.v1.ListServersResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListServers"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListServersRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListServersResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("ListServers"))
              .build();
        }
      }
    }
    return getListServersMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.PurgeTasksRequest,
      dev.taskyard.v1.PurgeTasksResponse> getPurgeTasksMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PurgeTasks",
      requestType = dev.taskyard.v1.PurgeTasksRequest.class,
      responseType = dev.taskyard.v1.PurgeTasksResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.PurgeTasksRequest,
      dev.taskyard.v1.PurgeTasksResponse> getPurgeTasksMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.PurgeTasksRequest, dev.taskyard.v1.PurgeTasksResponse> getPurgeTasksMethod;
    if ((getPurgeTasksMethod = QueueServiceGrpc.getPurgeTasksMethod) == null) {
      synchronized (QueueServiceGrpc.class) {
        if ((getPurgeTasksMethod = QueueServiceGrpc.getPurgeTasksMethod) == null) {
          QueueServiceGrpc.getPurgeTasksMethod = getPurgeTasksMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.PurgeTasksRequest, dev.taskyard.v1.PurgeTasksResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PurgeTasks"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PurgeTasksRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PurgeTasksResponse.getDefaultInstance()))
              .setSchemaDescriptor(new QueueServiceMethodDescriptorSupplier("PurgeTasks"))
              .build();
        }
      }
    }
    return getPurgeTasksMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static QueueServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<QueueServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<QueueServiceStub>() {
        @java.lang.Override
        public QueueServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new QueueServiceStub(channel, callOptions);
        }
      };
    return QueueServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static QueueServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<QueueServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<QueueServiceBlockingV2Stub>() {
        @java.lang.Override
        public QueueServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new QueueServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return QueueServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static QueueServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<QueueServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<QueueServiceBlockingStub>() {
        @java.lang.Override
        public QueueServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new QueueServiceBlockingStub(channel, callOptions);
        }
      };
    return QueueServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static QueueServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<QueueServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<QueueServiceFutureStub>() {
        @java.lang.Override
        public QueueServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new QueueServiceFutureStub(channel, callOptions);
        }
      };
    return QueueServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Operating queues and seeing the servers that run them (the seed's
   * `queue status|clear|retry|stats|servers`).
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Tasks of a paused queue stay queued; nothing is dispatched from it.
     * </pre>
     */
    default void pauseQueue(dev.taskyard.v1.PauseQueueRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PauseQueueResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPauseQueueMethod(), responseObserver);
    }

    /**
     */
    default void resumeQueue(dev.taskyard.v1.ResumeQueueRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeQueueResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getResumeQueueMethod(), responseObserver);
    }

    /**
     * <pre>
     * Cancel every pending task (PENDING, QUEUED, SCHEDULED, RETRYING) of a
     * queue. Refused with FAILED_PRECONDITION unless the deployment is marked as
     * development (TASKYARD_ENVIRONMENT=development).
     * </pre>
     */
    default void clearQueue(dev.taskyard.v1.ClearQueueRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ClearQueueResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getClearQueueMethod(), responseObserver);
    }

    /**
     * <pre>
     * Failed tasks become a new attempt (FAILURE -&gt; QUEUED).
     * </pre>
     */
    default void retryTasks(dev.taskyard.v1.RetryTasksRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.RetryTasksResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRetryTasksMethod(), responseObserver);
    }

    /**
     * <pre>
     * Counts per queue and state, paused queues, servers in brief.
     * </pre>
     */
    default void getQueueStatus(dev.taskyard.v1.GetQueueStatusRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetQueueStatusResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetQueueStatusMethod(), responseObserver);
    }

    /**
     * <pre>
     * The servers registry: every worker pool that beat recently.
     * </pre>
     */
    default void listServers(dev.taskyard.v1.ListServersRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListServersResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListServersMethod(), responseObserver);
    }

    /**
     * <pre>
     * Delete final tasks (with their logs) older than the retention window now;
     * the store also does it hourly.
     * </pre>
     */
    default void purgeTasks(dev.taskyard.v1.PurgeTasksRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PurgeTasksResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPurgeTasksMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service QueueService.
   * <pre>
   * Operating queues and seeing the servers that run them (the seed's
   * `queue status|clear|retry|stats|servers`).
   * </pre>
   */
  public static abstract class QueueServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return QueueServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service QueueService.
   * <pre>
   * Operating queues and seeing the servers that run them (the seed's
   * `queue status|clear|retry|stats|servers`).
   * </pre>
   */
  public static final class QueueServiceStub
      extends io.grpc.stub.AbstractAsyncStub<QueueServiceStub> {
    private QueueServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected QueueServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new QueueServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Tasks of a paused queue stay queued; nothing is dispatched from it.
     * </pre>
     */
    public void pauseQueue(dev.taskyard.v1.PauseQueueRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PauseQueueResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPauseQueueMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void resumeQueue(dev.taskyard.v1.ResumeQueueRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeQueueResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getResumeQueueMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Cancel every pending task (PENDING, QUEUED, SCHEDULED, RETRYING) of a
     * queue. Refused with FAILED_PRECONDITION unless the deployment is marked as
     * development (TASKYARD_ENVIRONMENT=development).
     * </pre>
     */
    public void clearQueue(dev.taskyard.v1.ClearQueueRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ClearQueueResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getClearQueueMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Failed tasks become a new attempt (FAILURE -&gt; QUEUED).
     * </pre>
     */
    public void retryTasks(dev.taskyard.v1.RetryTasksRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.RetryTasksResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRetryTasksMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Counts per queue and state, paused queues, servers in brief.
     * </pre>
     */
    public void getQueueStatus(dev.taskyard.v1.GetQueueStatusRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetQueueStatusResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetQueueStatusMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * The servers registry: every worker pool that beat recently.
     * </pre>
     */
    public void listServers(dev.taskyard.v1.ListServersRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListServersResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListServersMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Delete final tasks (with their logs) older than the retention window now;
     * the store also does it hourly.
     * </pre>
     */
    public void purgeTasks(dev.taskyard.v1.PurgeTasksRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PurgeTasksResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPurgeTasksMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service QueueService.
   * <pre>
   * Operating queues and seeing the servers that run them (the seed's
   * `queue status|clear|retry|stats|servers`).
   * </pre>
   */
  public static final class QueueServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<QueueServiceBlockingV2Stub> {
    private QueueServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected QueueServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new QueueServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Tasks of a paused queue stay queued; nothing is dispatched from it.
     * </pre>
     */
    public dev.taskyard.v1.PauseQueueResponse pauseQueue(dev.taskyard.v1.PauseQueueRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPauseQueueMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ResumeQueueResponse resumeQueue(dev.taskyard.v1.ResumeQueueRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getResumeQueueMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Cancel every pending task (PENDING, QUEUED, SCHEDULED, RETRYING) of a
     * queue. Refused with FAILED_PRECONDITION unless the deployment is marked as
     * development (TASKYARD_ENVIRONMENT=development).
     * </pre>
     */
    public dev.taskyard.v1.ClearQueueResponse clearQueue(dev.taskyard.v1.ClearQueueRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getClearQueueMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Failed tasks become a new attempt (FAILURE -&gt; QUEUED).
     * </pre>
     */
    public dev.taskyard.v1.RetryTasksResponse retryTasks(dev.taskyard.v1.RetryTasksRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRetryTasksMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Counts per queue and state, paused queues, servers in brief.
     * </pre>
     */
    public dev.taskyard.v1.GetQueueStatusResponse getQueueStatus(dev.taskyard.v1.GetQueueStatusRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetQueueStatusMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The servers registry: every worker pool that beat recently.
     * </pre>
     */
    public dev.taskyard.v1.ListServersResponse listServers(dev.taskyard.v1.ListServersRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListServersMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Delete final tasks (with their logs) older than the retention window now;
     * the store also does it hourly.
     * </pre>
     */
    public dev.taskyard.v1.PurgeTasksResponse purgeTasks(dev.taskyard.v1.PurgeTasksRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPurgeTasksMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service QueueService.
   * <pre>
   * Operating queues and seeing the servers that run them (the seed's
   * `queue status|clear|retry|stats|servers`).
   * </pre>
   */
  public static final class QueueServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<QueueServiceBlockingStub> {
    private QueueServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected QueueServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new QueueServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Tasks of a paused queue stay queued; nothing is dispatched from it.
     * </pre>
     */
    public dev.taskyard.v1.PauseQueueResponse pauseQueue(dev.taskyard.v1.PauseQueueRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPauseQueueMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ResumeQueueResponse resumeQueue(dev.taskyard.v1.ResumeQueueRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getResumeQueueMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Cancel every pending task (PENDING, QUEUED, SCHEDULED, RETRYING) of a
     * queue. Refused with FAILED_PRECONDITION unless the deployment is marked as
     * development (TASKYARD_ENVIRONMENT=development).
     * </pre>
     */
    public dev.taskyard.v1.ClearQueueResponse clearQueue(dev.taskyard.v1.ClearQueueRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getClearQueueMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Failed tasks become a new attempt (FAILURE -&gt; QUEUED).
     * </pre>
     */
    public dev.taskyard.v1.RetryTasksResponse retryTasks(dev.taskyard.v1.RetryTasksRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRetryTasksMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Counts per queue and state, paused queues, servers in brief.
     * </pre>
     */
    public dev.taskyard.v1.GetQueueStatusResponse getQueueStatus(dev.taskyard.v1.GetQueueStatusRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetQueueStatusMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The servers registry: every worker pool that beat recently.
     * </pre>
     */
    public dev.taskyard.v1.ListServersResponse listServers(dev.taskyard.v1.ListServersRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListServersMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Delete final tasks (with their logs) older than the retention window now;
     * the store also does it hourly.
     * </pre>
     */
    public dev.taskyard.v1.PurgeTasksResponse purgeTasks(dev.taskyard.v1.PurgeTasksRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPurgeTasksMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service QueueService.
   * <pre>
   * Operating queues and seeing the servers that run them (the seed's
   * `queue status|clear|retry|stats|servers`).
   * </pre>
   */
  public static final class QueueServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<QueueServiceFutureStub> {
    private QueueServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected QueueServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new QueueServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Tasks of a paused queue stay queued; nothing is dispatched from it.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.PauseQueueResponse> pauseQueue(
        dev.taskyard.v1.PauseQueueRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPauseQueueMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ResumeQueueResponse> resumeQueue(
        dev.taskyard.v1.ResumeQueueRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getResumeQueueMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Cancel every pending task (PENDING, QUEUED, SCHEDULED, RETRYING) of a
     * queue. Refused with FAILED_PRECONDITION unless the deployment is marked as
     * development (TASKYARD_ENVIRONMENT=development).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ClearQueueResponse> clearQueue(
        dev.taskyard.v1.ClearQueueRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getClearQueueMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Failed tasks become a new attempt (FAILURE -&gt; QUEUED).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.RetryTasksResponse> retryTasks(
        dev.taskyard.v1.RetryTasksRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRetryTasksMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Counts per queue and state, paused queues, servers in brief.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.GetQueueStatusResponse> getQueueStatus(
        dev.taskyard.v1.GetQueueStatusRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetQueueStatusMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * The servers registry: every worker pool that beat recently.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListServersResponse> listServers(
        dev.taskyard.v1.ListServersRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListServersMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Delete final tasks (with their logs) older than the retention window now;
     * the store also does it hourly.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.PurgeTasksResponse> purgeTasks(
        dev.taskyard.v1.PurgeTasksRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPurgeTasksMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_PAUSE_QUEUE = 0;
  private static final int METHODID_RESUME_QUEUE = 1;
  private static final int METHODID_CLEAR_QUEUE = 2;
  private static final int METHODID_RETRY_TASKS = 3;
  private static final int METHODID_GET_QUEUE_STATUS = 4;
  private static final int METHODID_LIST_SERVERS = 5;
  private static final int METHODID_PURGE_TASKS = 6;

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
        case METHODID_PAUSE_QUEUE:
          serviceImpl.pauseQueue((dev.taskyard.v1.PauseQueueRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.PauseQueueResponse>) responseObserver);
          break;
        case METHODID_RESUME_QUEUE:
          serviceImpl.resumeQueue((dev.taskyard.v1.ResumeQueueRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeQueueResponse>) responseObserver);
          break;
        case METHODID_CLEAR_QUEUE:
          serviceImpl.clearQueue((dev.taskyard.v1.ClearQueueRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ClearQueueResponse>) responseObserver);
          break;
        case METHODID_RETRY_TASKS:
          serviceImpl.retryTasks((dev.taskyard.v1.RetryTasksRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.RetryTasksResponse>) responseObserver);
          break;
        case METHODID_GET_QUEUE_STATUS:
          serviceImpl.getQueueStatus((dev.taskyard.v1.GetQueueStatusRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.GetQueueStatusResponse>) responseObserver);
          break;
        case METHODID_LIST_SERVERS:
          serviceImpl.listServers((dev.taskyard.v1.ListServersRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListServersResponse>) responseObserver);
          break;
        case METHODID_PURGE_TASKS:
          serviceImpl.purgeTasks((dev.taskyard.v1.PurgeTasksRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.PurgeTasksResponse>) responseObserver);
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
          getPauseQueueMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.PauseQueueRequest,
              dev.taskyard.v1.PauseQueueResponse>(
                service, METHODID_PAUSE_QUEUE)))
        .addMethod(
          getResumeQueueMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ResumeQueueRequest,
              dev.taskyard.v1.ResumeQueueResponse>(
                service, METHODID_RESUME_QUEUE)))
        .addMethod(
          getClearQueueMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ClearQueueRequest,
              dev.taskyard.v1.ClearQueueResponse>(
                service, METHODID_CLEAR_QUEUE)))
        .addMethod(
          getRetryTasksMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.RetryTasksRequest,
              dev.taskyard.v1.RetryTasksResponse>(
                service, METHODID_RETRY_TASKS)))
        .addMethod(
          getGetQueueStatusMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.GetQueueStatusRequest,
              dev.taskyard.v1.GetQueueStatusResponse>(
                service, METHODID_GET_QUEUE_STATUS)))
        .addMethod(
          getListServersMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListServersRequest,
              dev.taskyard.v1.ListServersResponse>(
                service, METHODID_LIST_SERVERS)))
        .addMethod(
          getPurgeTasksMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.PurgeTasksRequest,
              dev.taskyard.v1.PurgeTasksResponse>(
                service, METHODID_PURGE_TASKS)))
        .build();
  }

  private static abstract class QueueServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    QueueServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.taskyard.v1.QueueServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("QueueService");
    }
  }

  private static final class QueueServiceFileDescriptorSupplier
      extends QueueServiceBaseDescriptorSupplier {
    QueueServiceFileDescriptorSupplier() {}
  }

  private static final class QueueServiceMethodDescriptorSupplier
      extends QueueServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    QueueServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (QueueServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new QueueServiceFileDescriptorSupplier())
              .addMethod(getPauseQueueMethod())
              .addMethod(getResumeQueueMethod())
              .addMethod(getClearQueueMethod())
              .addMethod(getRetryTasksMethod())
              .addMethod(getGetQueueStatusMethod())
              .addMethod(getListServersMethod())
              .addMethod(getPurgeTasksMethod())
              .build();
        }
      }
    }
    return result;
  }
}
