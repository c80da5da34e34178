package dev.taskyard.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Periodic tasks. Each due run fires exactly once however many schedulers run.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class ScheduleServiceGrpc {

  private ScheduleServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "taskyard.v1.ScheduleService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.CreateScheduleRequest,
      dev.taskyard.v1.CreateScheduleResponse> getCreateScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateSchedule",
      requestType = dev.taskyard.v1.CreateScheduleRequest.class,
      responseType = dev.taskyard.v1.CreateScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.CreateScheduleRequest,
      dev.taskyard.v1.CreateScheduleResponse> getCreateScheduleMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.CreateScheduleRequest, dev.taskyard.v1.CreateScheduleResponse> getCreateScheduleMethod;
    if ((getCreateScheduleMethod = ScheduleServiceGrpc.getCreateScheduleMethod) == null) {
      synchronized (ScheduleServiceGrpc.class) {
        if ((getCreateScheduleMethod = ScheduleServiceGrpc.getCreateScheduleMethod) == null) {
          ScheduleServiceGrpc.getCreateScheduleMethod = getCreateScheduleMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.CreateScheduleRequest, dev.taskyard.v1.CreateScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CreateScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CreateScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScheduleServiceMethodDescriptorSupplier("CreateSchedule"))
              .build();
        }
      }
    }
    return getCreateScheduleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.GetScheduleRequest,
      dev.taskyard.v1.GetScheduleResponse> getGetScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSchedule",
      requestType = dev.taskyard.v1.GetScheduleRequest.class,
      responseType = dev.taskyard.v1.GetScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.GetScheduleRequest,
      dev.taskyard.v1.GetScheduleResponse> getGetScheduleMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.GetScheduleRequest, dev.taskyard.v1.GetScheduleResponse> getGetScheduleMethod;
    if ((getGetScheduleMethod = ScheduleServiceGrpc.getGetScheduleMethod) == null) {
      synchronized (ScheduleServiceGrpc.class) {
        if ((getGetScheduleMethod = ScheduleServiceGrpc.getGetScheduleMethod) == null) {
          ScheduleServiceGrpc.getGetScheduleMethod = getGetScheduleMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.GetScheduleRequest, dev.taskyard.v1.GetScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScheduleServiceMethodDescriptorSupplier("GetSchedule"))
              .build();
        }
      }
    }
    return getGetScheduleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListSchedulesRequest,
      dev.taskyard.v1.ListSchedulesResponse> getListSchedulesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListSchedules",
      requestType = dev.taskyard.v1.ListSchedulesRequest.class,
      responseType = dev.taskyard.v1.ListSchedulesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListSchedulesRequest,
      dev.taskyard.v1.ListSchedulesResponse> getListSchedulesMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListSchedulesRequest, dev.taskyard.v1.ListSchedulesResponse> getListSchedulesMethod;
    if ((getListSchedulesMethod = ScheduleServiceGrpc.getListSchedulesMethod) == null) {
      synchronized (ScheduleServiceGrpc.class) {
        if ((getListSchedulesMethod = ScheduleServiceGrpc.getListSchedulesMethod) == null) {
          ScheduleServiceGrpc.getListSchedulesMethod = getListSchedulesMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListSchedulesRequest, dev.taskyard.v1.ListSchedulesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListSchedules"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListSchedulesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListSchedulesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScheduleServiceMethodDescriptorSupplier("ListSchedules"))
              .build();
        }
      }
    }
    return getListSchedulesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.PauseScheduleRequest,
      dev.taskyard.v1.PauseScheduleResponse> getPauseScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PauseSchedule",
      requestType = dev.taskyard.v1.PauseScheduleRequest.class,
      responseType = dev.taskyard.v1.PauseScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.PauseScheduleRequest,
      dev.taskyard.v1.PauseScheduleResponse> getPauseScheduleMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.PauseScheduleRequest, dev.taskyard.v1.PauseScheduleResponse> getPauseScheduleMethod;
    if ((getPauseScheduleMethod = ScheduleServiceGrpc.getPauseScheduleMethod) == null) {
      synchronized (ScheduleServiceGrpc.class) {
        if ((getPauseScheduleMethod = ScheduleServiceGrpc.getPauseScheduleMethod) == null) {
          ScheduleServiceGrpc.getPauseScheduleMethod = getPauseScheduleMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.PauseScheduleRequest, dev.taskyard.v1.PauseScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PauseSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PauseScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PauseScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScheduleServiceMethodDescriptorSupplier("PauseSchedule"))
              .build();
        }
      }
    }
    return getPauseScheduleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeScheduleRequest,
      dev.taskyard.v1.ResumeScheduleResponse> getResumeScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ResumeSchedule",
      requestType = dev.taskyard.v1.ResumeScheduleRequest.class,
      responseType = dev.taskyard.v1.ResumeScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeScheduleRequest,
      dev.taskyard.v1.ResumeScheduleResponse> getResumeScheduleMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeScheduleRequest, dev.taskyard.v1.ResumeScheduleResponse> getResumeScheduleMethod;
    if ((getResumeScheduleMethod = ScheduleServiceGrpc.getResumeScheduleMethod) == null) {
      synchronized (ScheduleServiceGrpc.class) {
        if ((getResumeScheduleMethod = ScheduleServiceGrpc.getResumeScheduleMethod) == null) {
          ScheduleServiceGrpc.getResumeScheduleMethod = getResumeScheduleMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ResumeScheduleRequest, dev.taskyard.v1.ResumeScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ResumeSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ResumeScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ResumeScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScheduleServiceMethodDescriptorSupplier("ResumeSchedule"))
              .build();
        }
      }
    }
    return getResumeScheduleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.DeleteScheduleRequest,
      dev.taskyard.v1.DeleteScheduleResponse> getDeleteScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteSchedule",
      requestType = dev.taskyard.v1.DeleteScheduleRequest.class,
      responseType = dev.taskyard.v1.DeleteScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.DeleteScheduleRequest,
      dev.taskyard.v1.DeleteScheduleResponse> getDeleteScheduleMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.DeleteScheduleRequest, dev.taskyard.v1.DeleteScheduleResponse> getDeleteScheduleMethod;
    if ((getDeleteScheduleMethod = ScheduleServiceGrpc.getDeleteScheduleMethod) == null) {
      synchronized (ScheduleServiceGrpc.class) {
        if ((getDeleteScheduleMethod = ScheduleServiceGrpc.getDeleteScheduleMethod) == null) {
          ScheduleServiceGrpc.getDeleteScheduleMethod = getDeleteScheduleMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.DeleteScheduleRequest, dev.taskyard.v1.DeleteScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.DeleteScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.DeleteScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScheduleServiceMethodDescriptorSupplier("DeleteSchedule"))
              .build();
        }
      }
    }
    return getDeleteScheduleMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.TriggerScheduleRequest,
      dev.taskyard.v1.TriggerScheduleResponse> getTriggerScheduleMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "TriggerSchedule",
      requestType = dev.taskyard.v1.TriggerScheduleRequest.class,
      responseType = dev.taskyard.v1.TriggerScheduleResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.TriggerScheduleRequest,
      dev.taskyard.v1.TriggerScheduleResponse> getTriggerScheduleMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.TriggerScheduleRequest, dev.taskyard.v1.TriggerScheduleResponse> getTriggerScheduleMethod;
    if ((getTriggerScheduleMethod = ScheduleServiceGrpc.getTriggerScheduleMethod) == null) {
      synchronized (ScheduleServiceGrpc.class) {
        if ((getTriggerScheduleMethod = ScheduleServiceGrpc.getTriggerScheduleMethod) == null) {
          ScheduleServiceGrpc.getTriggerScheduleMethod = getTriggerScheduleMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.TriggerScheduleRequest, dev.taskyard.v1.TriggerScheduleResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "TriggerSchedule"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.TriggerScheduleRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.TriggerScheduleResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ScheduleServiceMethodDescriptorSupplier("TriggerSchedule"))
              .build();
        }
      }
    }
    return getTriggerScheduleMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static ScheduleServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ScheduleServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ScheduleServiceStub>() {
        @java.lang.Override
        public ScheduleServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ScheduleServiceStub(channel, callOptions);
        }
      };
    return ScheduleServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static ScheduleServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ScheduleServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ScheduleServiceBlockingV2Stub>() {
        @java.lang.Override
        public ScheduleServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ScheduleServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return ScheduleServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static ScheduleServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ScheduleServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ScheduleServiceBlockingStub>() {
        @java.lang.Override
        public ScheduleServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ScheduleServiceBlockingStub(channel, callOptions);
        }
      };
    return ScheduleServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static ScheduleServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ScheduleServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ScheduleServiceFutureStub>() {
        @java.lang.Override
        public ScheduleServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ScheduleServiceFutureStub(channel, callOptions);
        }
      };
    return ScheduleServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Periodic tasks. Each due run fires exactly once however many schedulers run.
   * </pre>
   */
  public interface AsyncService {

    /**
     */
    default void createSchedule(dev.taskyard.v1.CreateScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CreateScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateScheduleMethod(), responseObserver);
    }

    /**
     */
    default void getSchedule(dev.taskyard.v1.GetScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetScheduleMethod(), responseObserver);
    }

    /**
     */
    default void listSchedules(dev.taskyard.v1.ListSchedulesRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListSchedulesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSchedulesMethod(), responseObserver);
    }

    /**
     */
    default void pauseSchedule(dev.taskyard.v1.PauseScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PauseScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPauseScheduleMethod(), responseObserver);
    }

    /**
     */
    default void resumeSchedule(dev.taskyard.v1.ResumeScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getResumeScheduleMethod(), responseObserver);
    }

    /**
     */
    default void deleteSchedule(dev.taskyard.v1.DeleteScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.DeleteScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteScheduleMethod(), responseObserver);
    }

    /**
     * <pre>
     * Fire one run now, outside the schedule (counts in times_run).
     * </pre>
     */
    default void triggerSchedule(dev.taskyard.v1.TriggerScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.TriggerScheduleResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getTriggerScheduleMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service ScheduleService.
   * <pre>
   * Periodic tasks. Each due run fires exactly once however many schedulers run.
   * </pre>
   */
  public static abstract class ScheduleServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return ScheduleServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service ScheduleService.
   * <pre>
   * Periodic tasks. Each due run fires exactly once however many schedulers run.
   * </pre>
   */
  public static final class ScheduleServiceStub
      extends io.grpc.stub.AbstractAsyncStub<ScheduleServiceStub> {
    private ScheduleServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ScheduleServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ScheduleServiceStub(channel, callOptions);
    }

    /**
     */
    public void createSchedule(dev.taskyard.v1.CreateScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CreateScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateScheduleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getSchedule(dev.taskyard.v1.GetScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetScheduleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void listSchedules(dev.taskyard.v1.ListSchedulesRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListSchedulesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSchedulesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void pauseSchedule(dev.taskyard.v1.PauseScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PauseScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPauseScheduleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void resumeSchedule(dev.taskyard.v1.ResumeScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getResumeScheduleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void deleteSchedule(dev.taskyard.v1.DeleteScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.DeleteScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteScheduleMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Fire one run now, outside the schedule (counts in times_run).
     * </pre>
     */
    public void triggerSchedule(dev.taskyard.v1.TriggerScheduleRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.TriggerScheduleResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getTriggerScheduleMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service ScheduleService.
   * <pre>
   * Periodic tasks. Each due run fires exactly once however many schedulers run.
   * </pre>
   */
  public static final class ScheduleServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<ScheduleServiceBlockingV2Stub> {
    private ScheduleServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ScheduleServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ScheduleServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     */
    public dev.taskyard.v1.CreateScheduleResponse createSchedule(dev.taskyard.v1.CreateScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCreateScheduleMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.GetScheduleResponse getSchedule(dev.taskyard.v1.GetScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetScheduleMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ListSchedulesResponse listSchedules(dev.taskyard.v1.ListSchedulesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSchedulesMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.PauseScheduleResponse pauseSchedule(dev.taskyard.v1.PauseScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPauseScheduleMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ResumeScheduleResponse resumeSchedule(dev.taskyard.v1.ResumeScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getResumeScheduleMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.DeleteScheduleResponse deleteSchedule(dev.taskyard.v1.DeleteScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Fire one run now, outside the schedule (counts in times_run).
     * </pre>
     */
    public dev.taskyard.v1.TriggerScheduleResponse triggerSchedule(dev.taskyard.v1.TriggerScheduleRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getTriggerScheduleMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service ScheduleService.
   * <pre>
   * Periodic tasks. Each due run fires exactly once however many schedulers run.
   * </pre>
   */
  public static final class ScheduleServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<ScheduleServiceBlockingStub> {
    private ScheduleServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ScheduleServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ScheduleServiceBlockingStub(channel, callOptions);
    }

    /**
     */
    public dev.taskyard.v1.CreateScheduleResponse createSchedule(dev.taskyard.v1.CreateScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateScheduleMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.GetScheduleResponse getSchedule(dev.taskyard.v1.GetScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetScheduleMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ListSchedulesResponse listSchedules(dev.taskyard.v1.ListSchedulesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSchedulesMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.PauseScheduleResponse pauseSchedule(dev.taskyard.v1.PauseScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPauseScheduleMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ResumeScheduleResponse resumeSchedule(dev.taskyard.v1.ResumeScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getResumeScheduleMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.DeleteScheduleResponse deleteSchedule(dev.taskyard.v1.DeleteScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteScheduleMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Fire one run now, outside the schedule (counts in times_run).
     * </pre>
     */
    public dev.taskyard.v1.TriggerScheduleResponse triggerSchedule(dev.taskyard.v1.TriggerScheduleRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getTriggerScheduleMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service ScheduleService.
   * <pre>
   * Periodic tasks. Each due run fires exactly once however many schedulers run.
   * </pre>
   */
  public static final class ScheduleServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<ScheduleServiceFutureStub> {
    private ScheduleServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ScheduleServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ScheduleServiceFutureStub(channel, callOptions);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.CreateScheduleResponse> createSchedule(
        dev.taskyard.v1.CreateScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateScheduleMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.GetScheduleResponse> getSchedule(
        dev.taskyard.v1.GetScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetScheduleMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListSchedulesResponse> listSchedules(
        dev.taskyard.v1.ListSchedulesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSchedulesMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.PauseScheduleResponse> pauseSchedule(
        dev.taskyard.v1.PauseScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPauseScheduleMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ResumeScheduleResponse> resumeSchedule(
        dev.taskyard.v1.ResumeScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getResumeScheduleMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.DeleteScheduleResponse> deleteSchedule(
        dev.taskyard.v1.DeleteScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteScheduleMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Fire one run now, outside the schedule (counts in times_run).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.TriggerScheduleResponse> triggerSchedule(
        dev.taskyard.v1.TriggerScheduleRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getTriggerScheduleMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_CREATE_SCHEDULE = 0;
  private static final int METHODID_GET_SCHEDULE = 1;
  private static final int METHODID_LIST_SCHEDULES = 2;
  private static final int METHODID_PAUSE_SCHEDULE = 3;
  private static final int METHODID_RESUME_SCHEDULE = 4;
  private static final int METHODID_DELETE_SCHEDULE = 5;
  private static final int METHODID_TRIGGER_SCHEDULE = 6;

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
        case METHODID_CREATE_SCHEDULE:
          serviceImpl.createSchedule((dev.taskyard.v1.CreateScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.CreateScheduleResponse>) responseObserver);
          break;
        case METHODID_GET_SCHEDULE:
          serviceImpl.getSchedule((dev.taskyard.v1.GetScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.GetScheduleResponse>) responseObserver);
          break;
        case METHODID_LIST_SCHEDULES:
          serviceImpl.listSchedules((dev.taskyard.v1.ListSchedulesRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListSchedulesResponse>) responseObserver);
          break;
        case METHODID_PAUSE_SCHEDULE:
          serviceImpl.pauseSchedule((dev.taskyard.v1.PauseScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.PauseScheduleResponse>) responseObserver);
          break;
        case METHODID_RESUME_SCHEDULE:
          serviceImpl.resumeSchedule((dev.taskyard.v1.ResumeScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeScheduleResponse>) responseObserver);
          break;
        case METHODID_DELETE_SCHEDULE:
          serviceImpl.deleteSchedule((dev.taskyard.v1.DeleteScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.DeleteScheduleResponse>) responseObserver);
          break;
        case METHODID_TRIGGER_SCHEDULE:
          serviceImpl.triggerSchedule((dev.taskyard.v1.TriggerScheduleRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.TriggerScheduleResponse>) responseObserver);
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
          getCreateScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.CreateScheduleRequest,
              dev.taskyard.v1.CreateScheduleResponse>(
                service, METHODID_CREATE_SCHEDULE)))
        .addMethod(
          getGetScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.GetScheduleRequest,
              dev.taskyard.v1.GetScheduleResponse>(
                service, METHODID_GET_SCHEDULE)))
        .addMethod(
          getListSchedulesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListSchedulesRequest,
              dev.taskyard.v1.ListSchedulesResponse>(
                service, METHODID_LIST_SCHEDULES)))
        .addMethod(
          getPauseScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.PauseScheduleRequest,
              dev.taskyard.v1.PauseScheduleResponse>(
                service, METHODID_PAUSE_SCHEDULE)))
        .addMethod(
          getResumeScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ResumeScheduleRequest,
              dev.taskyard.v1.ResumeScheduleResponse>(
                service, METHODID_RESUME_SCHEDULE)))
        .addMethod(
          getDeleteScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.DeleteScheduleRequest,
              dev.taskyard.v1.DeleteScheduleResponse>(
                service, METHODID_DELETE_SCHEDULE)))
        .addMethod(
          getTriggerScheduleMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.TriggerScheduleRequest,
              dev.taskyard.v1.TriggerScheduleResponse>(
                service, METHODID_TRIGGER_SCHEDULE)))
        .build();
  }

  private static abstract class ScheduleServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    ScheduleServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.taskyard.v1.ScheduleServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("ScheduleService");
    }
  }

  private static final class ScheduleServiceFileDescriptorSupplier
      extends ScheduleServiceBaseDescriptorSupplier {
    ScheduleServiceFileDescriptorSupplier() {}
  }

  private static final class ScheduleServiceMethodDescriptorSupplier
      extends ScheduleServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    ScheduleServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (ScheduleServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new ScheduleServiceFileDescriptorSupplier())
              .addMethod(getCreateScheduleMethod())
              .addMethod(getGetScheduleMethod())
              .addMethod(getListSchedulesMethod())
              .addMethod(getPauseScheduleMethod())
              .addMethod(getResumeScheduleMethod())
              .addMethod(getDeleteScheduleMethod())
              .addMethod(getTriggerScheduleMethod())
              .build();
        }
      }
    }
    return result;
  }
}
