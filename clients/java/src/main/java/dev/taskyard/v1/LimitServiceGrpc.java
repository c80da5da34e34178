package dev.taskyard.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Named limits and fairness weights. Changing them takes the `admin` scope,
 * reading them `read`. A change takes effect on the leading scheduler within
 * 1 s, and appears on WatchEvents (EVENT_KIND_LIMIT).
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class LimitServiceGrpc {

  private LimitServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "taskyard.v1.LimitService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.CreateLimitRequest,
      dev.taskyard.v1.CreateLimitResponse> getCreateLimitMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateLimit",
      requestType = dev.taskyard.v1.CreateLimitRequest.class,
      responseType = dev.taskyard.v1.CreateLimitResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.CreateLimitRequest,
      dev.taskyard.v1.CreateLimitResponse> getCreateLimitMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.CreateLimitRequest, dev.taskyard.v1.CreateLimitResponse> getCreateLimitMethod;
    if ((getCreateLimitMethod = LimitServiceGrpc.getCreateLimitMethod) == null) {
      synchronized (LimitServiceGrpc.class) {
        if ((getCreateLimitMethod = LimitServiceGrpc.getCreateLimitMethod) == null) {
          LimitServiceGrpc.getCreateLimitMethod = getCreateLimitMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.CreateLimitRequest, dev.taskyard.v1.CreateLimitResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateLimit"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CreateLimitRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CreateLimitResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LimitServiceMethodDescriptorSupplier("CreateLimit"))
              .build();
        }
      }
    }
    return getCreateLimitMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.GetLimitRequest,
      dev.taskyard.v1.GetLimitResponse> getGetLimitMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetLimit",
      requestType = dev.taskyard.v1.GetLimitRequest.class,
      responseType = dev.taskyard.v1.GetLimitResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.GetLimitRequest,
      dev.taskyard.v1.GetLimitResponse> getGetLimitMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.GetLimitRequest, dev.taskyard.v1.GetLimitResponse> getGetLimitMethod;
    if ((getGetLimitMethod = LimitServiceGrpc.getGetLimitMethod) == null) {
      synchronized (LimitServiceGrpc.class) {
        if ((getGetLimitMethod = LimitServiceGrpc.getGetLimitMethod) == null) {
          LimitServiceGrpc.getGetLimitMethod = getGetLimitMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.GetLimitRequest, dev.taskyard.v1.GetLimitResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetLimit"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetLimitRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetLimitResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LimitServiceMethodDescriptorSupplier("GetLimit"))
              .build();
        }
      }
    }
    return getGetLimitMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListLimitsRequest,
      dev.taskyard.v1.ListLimitsResponse> getListLimitsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListLimits",
      requestType = dev.taskyard.v1.ListLimitsRequest.class,
      responseType = dev.taskyard.v1.ListLimitsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListLimitsRequest,
      dev.taskyard.v1.ListLimitsResponse> getListLimitsMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListLimitsRequest, dev.taskyard.v1.ListLimitsResponse> getListLimitsMethod;
    if ((getListLimitsMethod = LimitServiceGrpc.getListLimitsMethod) == null) {
      synchronized (LimitServiceGrpc.class) {
        if ((getListLimitsMethod = LimitServiceGrpc.getListLimitsMethod) == null) {
          LimitServiceGrpc.getListLimitsMethod = getListLimitsMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListLimitsRequest, dev.taskyard.v1.ListLimitsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListLimits"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListLimitsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListLimitsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LimitServiceMethodDescriptorSupplier("ListLimits"))
              .build();
        }
      }
    }
    return getListLimitsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.UpdateLimitRequest,
      dev.taskyard.v1.UpdateLimitResponse> getUpdateLimitMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateLimit",
      requestType = dev.taskyard.v1.UpdateLimitRequest.class,
      responseType = dev.taskyard.v1.UpdateLimitResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.UpdateLimitRequest,
      dev.taskyard.v1.UpdateLimitResponse> getUpdateLimitMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.UpdateLimitRequest, dev.taskyard.v1.UpdateLimitResponse> getUpdateLimitMethod;
    if ((getUpdateLimitMethod = LimitServiceGrpc.getUpdateLimitMethod) == null) {
      synchronized (LimitServiceGrpc.class) {
        if ((getUpdateLimitMethod = LimitServiceGrpc.getUpdateLimitMethod) == null) {
          LimitServiceGrpc.getUpdateLimitMethod = getUpdateLimitMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.UpdateLimitRequest, dev.taskyard.v1.UpdateLimitResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateLimit"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.UpdateLimitRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.UpdateLimitResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LimitServiceMethodDescriptorSupplier("UpdateLimit"))
              .build();
        }
      }
    }
    return getUpdateLimitMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.DeleteLimitRequest,
      dev.taskyard.v1.DeleteLimitResponse> getDeleteLimitMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteLimit",
      requestType = dev.taskyard.v1.DeleteLimitRequest.class,
      responseType = dev.taskyard.v1.DeleteLimitResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.DeleteLimitRequest,
      dev.taskyard.v1.DeleteLimitResponse> getDeleteLimitMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.DeleteLimitRequest, dev.taskyard.v1.DeleteLimitResponse> getDeleteLimitMethod;
    if ((getDeleteLimitMethod = LimitServiceGrpc.getDeleteLimitMethod) == null) {
      synchronized (LimitServiceGrpc.class) {
        if ((getDeleteLimitMethod = LimitServiceGrpc.getDeleteLimitMethod) == null) {
          LimitServiceGrpc.getDeleteLimitMethod = getDeleteLimitMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.DeleteLimitRequest, dev.taskyard.v1.DeleteLimitResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteLimit"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.DeleteLimitRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.DeleteLimitResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LimitServiceMethodDescriptorSupplier("DeleteLimit"))
              .build();
        }
      }
    }
    return getDeleteLimitMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.SetKeyWeightRequest,
      dev.taskyard.v1.SetKeyWeightResponse> getSetKeyWeightMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SetKeyWeight",
      requestType = dev.taskyard.v1.SetKeyWeightRequest.class,
      responseType = dev.taskyard.v1.SetKeyWeightResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.SetKeyWeightRequest,
      dev.taskyard.v1.SetKeyWeightResponse> getSetKeyWeightMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.SetKeyWeightRequest, dev.taskyard.v1.SetKeyWeightResponse> getSetKeyWeightMethod;
    if ((getSetKeyWeightMethod = LimitServiceGrpc.getSetKeyWeightMethod) == null) {
      synchronized (LimitServiceGrpc.class) {
        if ((getSetKeyWeightMethod = LimitServiceGrpc.getSetKeyWeightMethod) == null) {
          LimitServiceGrpc.getSetKeyWeightMethod = getSetKeyWeightMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.SetKeyWeightRequest, dev.taskyard.v1.SetKeyWeightResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SetKeyWeight"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.SetKeyWeightRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.SetKeyWeightResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LimitServiceMethodDescriptorSupplier("SetKeyWeight"))
              .build();
        }
      }
    }
    return getSetKeyWeightMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListKeyWeightsRequest,
      dev.taskyard.v1.ListKeyWeightsResponse> getListKeyWeightsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListKeyWeights",
      requestType = dev.taskyard.v1.ListKeyWeightsRequest.class,
      responseType = dev.taskyard.v1.ListKeyWeightsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListKeyWeightsRequest,
      dev.taskyard.v1.ListKeyWeightsResponse> getListKeyWeightsMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListKeyWeightsRequest, dev.taskyard.v1.ListKeyWeightsResponse> getListKeyWeightsMethod;
    if ((getListKeyWeightsMethod = LimitServiceGrpc.getListKeyWeightsMethod) == null) {
      synchronized (LimitServiceGrpc.class) {
        if ((getListKeyWeightsMethod = LimitServiceGrpc.getListKeyWeightsMethod) == null) {
          LimitServiceGrpc.getListKeyWeightsMethod = getListKeyWeightsMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListKeyWeightsRequest, dev.taskyard.v1.ListKeyWeightsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListKeyWeights"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListKeyWeightsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListKeyWeightsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new LimitServiceMethodDescriptorSupplier("ListKeyWeights"))
              .build();
        }
      }
    }
    return getListKeyWeightsMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static LimitServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LimitServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LimitServiceStub>() {
        @java.lang.Override
        public LimitServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LimitServiceStub(channel, callOptions);
        }
      };
    return LimitServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static LimitServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LimitServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LimitServiceBlockingV2Stub>() {
        @java.lang.Override
        public LimitServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LimitServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return LimitServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static LimitServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LimitServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LimitServiceBlockingStub>() {
        @java.lang.Override
        public LimitServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LimitServiceBlockingStub(channel, callOptions);
        }
      };
    return LimitServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static LimitServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<LimitServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<LimitServiceFutureStub>() {
        @java.lang.Override
        public LimitServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new LimitServiceFutureStub(channel, callOptions);
        }
      };
    return LimitServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Named limits and fairness weights. Changing them takes the `admin` scope,
   * reading them `read`. A change takes effect on the leading scheduler within
   * 1 s, and appears on WatchEvents (EVENT_KIND_LIMIT).
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    default void createLimit(dev.taskyard.v1.CreateLimitRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CreateLimitResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateLimitMethod(), responseObserver);
    }

    /**
     */
    default void getLimit(dev.taskyard.v1.GetLimitRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetLimitResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetLimitMethod(), responseObserver);
    }

    /**
     */
    default void listLimits(dev.taskyard.v1.ListLimitsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListLimitsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListLimitsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Replaces the limit's definition (the name stays); NOT_FOUND when there is none.
     * </pre>
     */
    default void updateLimit(dev.taskyard.v1.UpdateLimitRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.UpdateLimitResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateLimitMethod(), responseObserver);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION while tasks that are not final use it, unless `force`:
     * then those tasks run without it.
     * </pre>
     */
    default void deleteLimit(dev.taskyard.v1.DeleteLimitRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.DeleteLimitResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteLimitMethod(), responseObserver);
    }

    /**
     */
    default void setKeyWeight(dev.taskyard.v1.SetKeyWeightRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.SetKeyWeightResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSetKeyWeightMethod(), responseObserver);
    }

    /**
     */
    default void listKeyWeights(dev.taskyard.v1.ListKeyWeightsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListKeyWeightsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListKeyWeightsMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service LimitService.
   * <pre>
   * Named limits and fairness weights. Changing them takes the `admin` scope,
   * reading them `read`. A change takes effect on the leading scheduler within
   * 1 s, and appears on WatchEvents (EVENT_KIND_LIMIT).
   * </pre>
   */
  public static abstract class LimitServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return LimitServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service LimitService.
   * <pre>
   * Named limits and fairness weights. Changing them takes the `admin` scope,
   * reading them `read`. A change takes effect on the leading scheduler within
   * 1 s, and appears on WatchEvents (EVENT_KIND_LIMIT).
   * </pre>
   */
  public static final class LimitServiceStub
      extends io.grpc.stub.AbstractAsyncStub<LimitServiceStub> {
    private LimitServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LimitServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LimitServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    public void createLimit(dev.taskyard.v1.CreateLimitRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CreateLimitResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateLimitMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getLimit(dev.taskyard.v1.GetLimitRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetLimitResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetLimitMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void listLimits(dev.taskyard.v1.ListLimitsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListLimitsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListLimitsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Replaces the limit's definition (the name stays); NOT_FOUND when there is none.
     * </pre>
     */
    public void updateLimit(dev.taskyard.v1.UpdateLimitRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.UpdateLimitResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateLimitMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION while tasks that are not final use it, unless `force`:
     * then those tasks run without it.
     * </pre>
     */
    public void deleteLimit(dev.taskyard.v1.DeleteLimitRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.DeleteLimitResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteLimitMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void setKeyWeight(dev.taskyard.v1.SetKeyWeightRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.SetKeyWeightResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSetKeyWeightMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void listKeyWeights(dev.taskyard.v1.ListKeyWeightsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListKeyWeightsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListKeyWeightsMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service LimitService.
   * <pre>
   * Named limits and fairness weights. Changing them takes the `admin` scope,
   * reading them `read`. A change takes effect on the leading scheduler within
   * 1 s, and appears on WatchEvents (EVENT_KIND_LIMIT).
   * </pre>
   */
  public static final class LimitServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<LimitServiceBlockingV2Stub> {
    private LimitServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LimitServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LimitServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    public dev.taskyard.v1.CreateLimitResponse createLimit(dev.taskyard.v1.CreateLimitRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCreateLimitMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.GetLimitResponse getLimit(dev.taskyard.v1.GetLimitRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetLimitMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ListLimitsResponse listLimits(dev.taskyard.v1.ListLimitsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListLimitsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Replaces the limit's definition (the name stays); NOT_FOUND when there is none.
     * </pre>
     */
    public dev.taskyard.v1.UpdateLimitResponse updateLimit(dev.taskyard.v1.UpdateLimitRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUpdateLimitMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION while tasks that are not final use it, unless `force`:
     * then those tasks run without it.
     * </pre>
     */
    public dev.taskyard.v1.DeleteLimitResponse deleteLimit(dev.taskyard.v1.DeleteLimitRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteLimitMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.SetKeyWeightResponse setKeyWeight(dev.taskyard.v1.SetKeyWeightRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSetKeyWeightMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ListKeyWeightsResponse listKeyWeights(dev.taskyard.v1.ListKeyWeightsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListKeyWeightsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service LimitService.
   * <pre>
   * Named limits and fairness weights. Changing them takes the `admin` scope,
   * reading them `read`. A change takes effect on the leading scheduler within
   * 1 s, and appears on WatchEvents (EVENT_KIND_LIMIT).
   * </pre>
   */
  public static final class LimitServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<LimitServiceBlockingStub> {
    private LimitServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LimitServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LimitServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    public dev.taskyard.v1.CreateLimitResponse createLimit(dev.taskyard.v1.CreateLimitRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateLimitMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.GetLimitResponse getLimit(dev.taskyard.v1.GetLimitRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetLimitMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ListLimitsResponse listLimits(dev.taskyard.v1.ListLimitsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListLimitsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Replaces the limit's definition (the name stays); NOT_FOUND when there is none.
     * </pre>
     */
    public dev.taskyard.v1.UpdateLimitResponse updateLimit(dev.taskyard.v1.UpdateLimitRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateLimitMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION while tasks that are not final use it, unless `force`:
     * then those tasks run without it.
     * </pre>
     */
    public dev.taskyard.v1.DeleteLimitResponse deleteLimit(dev.taskyard.v1.DeleteLimitRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteLimitMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.SetKeyWeightResponse setKeyWeight(dev.taskyard.v1.SetKeyWeightRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSetKeyWeightMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ListKeyWeightsResponse listKeyWeights(dev.taskyard.v1.ListKeyWeightsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListKeyWeightsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service LimitService.
   * <pre>
   * Named limits and fairness weights. Changing them takes the `admin` scope,
   * reading them `read`. A change takes effect on the leading scheduler within
   * 1 s, and appears on WatchEvents (EVENT_KIND_LIMIT).
   * </pre>
   */
  public static final class LimitServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<LimitServiceFutureStub> {
    private LimitServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected LimitServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new LimitServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.CreateLimitResponse> createLimit(
        dev.taskyard.v1.CreateLimitRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateLimitMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.GetLimitResponse> getLimit(
        dev.taskyard.v1.GetLimitRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetLimitMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListLimitsResponse> listLimits(
        dev.taskyard.v1.ListLimitsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListLimitsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Replaces the limit's definition (the name stays); NOT_FOUND when there is none.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.UpdateLimitResponse> updateLimit(
        dev.taskyard.v1.UpdateLimitRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateLimitMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION while tasks that are not final use it, unless `force`:
     * then those tasks run without it.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.DeleteLimitResponse> deleteLimit(
        dev.taskyard.v1.DeleteLimitRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteLimitMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.SetKeyWeightResponse> setKeyWeight(
        dev.taskyard.v1.SetKeyWeightRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSetKeyWeightMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListKeyWeightsResponse> listKeyWeights(
        dev.taskyard.v1.ListKeyWeightsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListKeyWeightsMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_CREATE_LIMIT = 0;
  private static final int METHODID_GET_LIMIT = 1;
  private static final int METHODID_LIST_LIMITS = 2;
  private static final int METHODID_UPDATE_LIMIT = 3;
  private static final int METHODID_DELETE_LIMIT = 4;
  private static final int METHODID_SET_KEY_WEIGHT = 5;
  private static final int METHODID_LIST_KEY_WEIGHTS = 6;

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
        case METHODID_CREATE_LIMIT:
          serviceImpl.createLimit((dev.taskyard.v1.CreateLimitRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.CreateLimitResponse>) responseObserver);
          break;
        case METHODID_GET_LIMIT:
          serviceImpl.getLimit((dev.taskyard.v1.GetLimitRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.GetLimitResponse>) responseObserver);
          break;
        case METHODID_LIST_LIMITS:
          serviceImpl.listLimits((dev.taskyard.v1.ListLimitsRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListLimitsResponse>) responseObserver);
          break;
        case METHODID_UPDATE_LIMIT:
          serviceImpl.updateLimit((dev.taskyard.v1.UpdateLimitRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.UpdateLimitResponse>) responseObserver);
          break;
        case METHODID_DELETE_LIMIT:
          serviceImpl.deleteLimit((dev.taskyard.v1.DeleteLimitRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.DeleteLimitResponse>) responseObserver);
          break;
        case METHODID_SET_KEY_WEIGHT:
          serviceImpl.setKeyWeight((dev.taskyard.v1.SetKeyWeightRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.SetKeyWeightResponse>) responseObserver);
          break;
        case METHODID_LIST_KEY_WEIGHTS:
          serviceImpl.listKeyWeights((dev.taskyard.v1.ListKeyWeightsRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListKeyWeightsResponse>) responseObserver);
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
          getCreateLimitMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.CreateLimitRequest,
              dev.taskyard.v1.CreateLimitResponse>(
                service, METHODID_CREATE_LIMIT)))
        .addMethod(
          getGetLimitMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.GetLimitRequest,
              dev.taskyard.v1.GetLimitResponse>(
                service, METHODID_GET_LIMIT)))
        .addMethod(
          getListLimitsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListLimitsRequest,
              dev.taskyard.v1.ListLimitsResponse>(
                service, METHODID_LIST_LIMITS)))
        .addMethod(
          getUpdateLimitMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.UpdateLimitRequest,
              dev.taskyard.v1.UpdateLimitResponse>(
                service, METHODID_UPDATE_LIMIT)))
        .addMethod(
          getDeleteLimitMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.DeleteLimitRequest,
              dev.taskyard.v1.DeleteLimitResponse>(
                service, METHODID_DELETE_LIMIT)))
        .addMethod(
          getSetKeyWeightMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.SetKeyWeightRequest,
              dev.taskyard.v1.SetKeyWeightResponse>(
                service, METHODID_SET_KEY_WEIGHT)))
        .addMethod(
          getListKeyWeightsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListKeyWeightsRequest,
              dev.taskyard.v1.ListKeyWeightsResponse>(
                service, METHODID_LIST_KEY_WEIGHTS)))
        .build();
  }

  private static abstract class LimitServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    LimitServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.taskyard.v1.LimitServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("LimitService");
    }
  }

  private static final class LimitServiceFileDescriptorSupplier
      extends LimitServiceBaseDescriptorSupplier {
    LimitServiceFileDescriptorSupplier() {}
  }

  private static final class LimitServiceMethodDescriptorSupplier
      extends LimitServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    LimitServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (LimitServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new LimitServiceFileDescriptorSupplier())
              .addMethod(getCreateLimitMethod())
              .addMethod(getGetLimitMethod())
              .addMethod(getListLimitsMethod())
              .addMethod(getUpdateLimitMethod())
              .addMethod(getDeleteLimitMethod())
              .addMethod(getSetKeyWeightMethod())
              .addMethod(getListKeyWeightsMethod())
              .build();
        }
      }
    }
    return result;
  }
}
