package dev.taskyard.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Tenants: teams or customers sharing one suite. A token belongs to one tenant
 * (the tokens file's `tenant=NAME` field) or is an operator token over all of
 * them. A tenant token sees and changes its own tenant's tasks, queues,
 * schedules, limits and events only; another tenant's task id answers
 * NOT_FOUND exactly as a missing one does. An operator token acts on every
 * tenant, or on one when the call carries the `taskyard-tenant` metadata key.
 * Every RPC here but GetTenant (a tenant token may read its own) is for
 * operator tokens only: PERMISSION_DENIED, reason OPERATOR_ONLY, for a tenant
 * token. Changes appear on WatchEvents (EVENT_KIND_TENANT).
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class TenantServiceGrpc {

  private TenantServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "taskyard.v1.TenantService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.CreateTenantRequest,
      dev.taskyard.v1.CreateTenantResponse> getCreateTenantMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateTenant",
      requestType = dev.taskyard.v1.CreateTenantRequest.class,
      responseType = dev.taskyard.v1.CreateTenantResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.CreateTenantRequest,
      dev.taskyard.v1.CreateTenantResponse> getCreateTenantMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.CreateTenantRequest, dev.taskyard.v1.CreateTenantResponse> getCreateTenantMethod;
    if ((getCreateTenantMethod = TenantServiceGrpc.getCreateTenantMethod) == null) {
      synchronized (TenantServiceGrpc.class) {
        if ((getCreateTenantMethod = TenantServiceGrpc.getCreateTenantMethod) == null) {
          TenantServiceGrpc.getCreateTenantMethod = getCreateTenantMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.CreateTenantRequest, dev.taskyard.v1.CreateTenantResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateTenant"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CreateTenantRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CreateTenantResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TenantServiceMethodDescriptorSupplier("CreateTenant"))
              .build();
        }
      }
    }
    return getCreateTenantMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.GetTenantRequest,
      dev.taskyard.v1.GetTenantResponse> getGetTenantMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetTenant",
      requestType = dev.taskyard.v1.GetTenantRequest.class,
      responseType = dev.taskyard.v1.GetTenantResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.GetTenantRequest,
      dev.taskyard.v1.GetTenantResponse> getGetTenantMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.GetTenantRequest, dev.taskyard.v1.GetTenantResponse> getGetTenantMethod;
    if ((getGetTenantMethod = TenantServiceGrpc.getGetTenantMethod) == null) {
      synchronized (TenantServiceGrpc.class) {
        if ((getGetTenantMethod = TenantServiceGrpc.getGetTenantMethod) == null) {
          TenantServiceGrpc.getGetTenantMethod = getGetTenantMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.GetTenantRequest, dev.taskyard.v1.GetTenantResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetTenant"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetTenantRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetTenantResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TenantServiceMethodDescriptorSupplier("GetTenant"))
              .build();
        }
      }
    }
    return getGetTenantMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListTenantsRequest,
      dev.taskyard.v1.ListTenantsResponse> getListTenantsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListTenants",
      requestType = dev.taskyard.v1.ListTenantsRequest.class,
      responseType = dev.taskyard.v1.ListTenantsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListTenantsRequest,
      dev.taskyard.v1.ListTenantsResponse> getListTenantsMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListTenantsRequest, dev.taskyard.v1.ListTenantsResponse> getListTenantsMethod;
    if ((getListTenantsMethod = TenantServiceGrpc.getListTenantsMethod) == null) {
      synchronized (TenantServiceGrpc.class) {
        if ((getListTenantsMethod = TenantServiceGrpc.getListTenantsMethod) == null) {
          TenantServiceGrpc.getListTenantsMethod = getListTenantsMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListTenantsRequest, dev.taskyard.v1.ListTenantsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListTenants"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListTenantsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListTenantsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TenantServiceMethodDescriptorSupplier("ListTenants"))
              .build();
        }
      }
    }
    return getListTenantsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.UpdateTenantRequest,
      dev.taskyard.v1.UpdateTenantResponse> getUpdateTenantMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateTenant",
      requestType = dev.taskyard.v1.UpdateTenantRequest.class,
      responseType = dev.taskyard.v1.UpdateTenantResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.UpdateTenantRequest,
      dev.taskyard.v1.UpdateTenantResponse> getUpdateTenantMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.UpdateTenantRequest, dev.taskyard.v1.UpdateTenantResponse> getUpdateTenantMethod;
    if ((getUpdateTenantMethod = TenantServiceGrpc.getUpdateTenantMethod) == null) {
      synchronized (TenantServiceGrpc.class) {
        if ((getUpdateTenantMethod = TenantServiceGrpc.getUpdateTenantMethod) == null) {
          TenantServiceGrpc.getUpdateTenantMethod = getUpdateTenantMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.UpdateTenantRequest, dev.taskyard.v1.UpdateTenantResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateTenant"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.UpdateTenantRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.UpdateTenantResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TenantServiceMethodDescriptorSupplier("UpdateTenant"))
              .build();
        }
      }
    }
    return getUpdateTenantMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.SuspendTenantRequest,
      dev.taskyard.v1.SuspendTenantResponse> getSuspendTenantMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SuspendTenant",
      requestType = dev.taskyard.v1.SuspendTenantRequest.class,
      responseType = dev.taskyard.v1.SuspendTenantResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.SuspendTenantRequest,
      dev.taskyard.v1.SuspendTenantResponse> getSuspendTenantMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.SuspendTenantRequest, dev.taskyard.v1.SuspendTenantResponse> getSuspendTenantMethod;
    if ((getSuspendTenantMethod = TenantServiceGrpc.getSuspendTenantMethod) == null) {
      synchronized (TenantServiceGrpc.class) {
        if ((getSuspendTenantMethod = TenantServiceGrpc.getSuspendTenantMethod) == null) {
          TenantServiceGrpc.getSuspendTenantMethod = getSuspendTenantMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.SuspendTenantRequest, dev.taskyard.v1.SuspendTenantResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SuspendTenant"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.SuspendTenantRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.SuspendTenantResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TenantServiceMethodDescriptorSupplier("SuspendTenant"))
              .build();
        }
      }
    }
    return getSuspendTenantMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeTenantRequest,
      dev.taskyard.v1.ResumeTenantResponse> getResumeTenantMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ResumeTenant",
      requestType = dev.taskyard.v1.ResumeTenantRequest.class,
      responseType = dev.taskyard.v1.ResumeTenantResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeTenantRequest,
      dev.taskyard.v1.ResumeTenantResponse> getResumeTenantMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeTenantRequest, dev.taskyard.v1.ResumeTenantResponse> getResumeTenantMethod;
    if ((getResumeTenantMethod = TenantServiceGrpc.getResumeTenantMethod) == null) {
      synchronized (TenantServiceGrpc.class) {
        if ((getResumeTenantMethod = TenantServiceGrpc.getResumeTenantMethod) == null) {
          TenantServiceGrpc.getResumeTenantMethod = getResumeTenantMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ResumeTenantRequest, dev.taskyard.v1.ResumeTenantResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ResumeTenant"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ResumeTenantRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ResumeTenantResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TenantServiceMethodDescriptorSupplier("ResumeTenant"))
              .build();
        }
      }
    }
    return getResumeTenantMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static TenantServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TenantServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TenantServiceStub>() {
        @java.lang.Override
        public TenantServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TenantServiceStub(channel, callOptions);
        }
      };
    return TenantServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static TenantServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TenantServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TenantServiceBlockingV2Stub>() {
        @java.lang.Override
        public TenantServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TenantServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return TenantServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static TenantServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TenantServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TenantServiceBlockingStub>() {
        @java.lang.Override
        public TenantServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TenantServiceBlockingStub(channel, callOptions);
        }
      };
    return TenantServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static TenantServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TenantServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TenantServiceFutureStub>() {
        @java.lang.Override
        public TenantServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TenantServiceFutureStub(channel, callOptions);
        }
      };
    return TenantServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Tenants: teams or customers sharing one suite. A token belongs to one tenant
   * (the tokens file's `tenant=NAME` field) or is an operator token over all of
   * them. A tenant token sees and changes its own tenant's tasks, queues,
   * schedules, limits and events only; another tenant's task id answers
   * NOT_FOUND exactly as a missing one does. An operator token acts on every
   * tenant, or on one when the call carries the `taskyard-tenant` metadata key.
   * Every RPC here but GetTenant (a tenant token may read its own) is for
   * operator tokens only: PERMISSION_DENIED, reason OPERATOR_ONLY, for a tenant
   * token. Changes appear on WatchEvents (EVENT_KIND_TENANT).
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    default void createTenant(dev.taskyard.v1.CreateTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CreateTenantResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateTenantMethod(), responseObserver);
    }

    /**
     * <pre>
     * NOT_FOUND when there is none (or, for a tenant token, when it is not its own).
     * </pre>
     */
    default void getTenant(dev.taskyard.v1.GetTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTenantResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetTenantMethod(), responseObserver);
    }

    /**
     * <pre>
     * By name; keyset pagination.
     * </pre>
     */
    default void listTenants(dev.taskyard.v1.ListTenantsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListTenantsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListTenantsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Replaces the quota, the weight and the description; NOT_FOUND when there is none.
     * </pre>
     */
    default void updateTenant(dev.taskyard.v1.UpdateTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.UpdateTenantResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateTenantMethod(), responseObserver);
    }

    /**
     * <pre>
     * Stops the tenant's dispatch and refuses its submissions (FAILED_PRECONDITION,
     * reason TENANT_SUSPENDED). Nothing it had is lost: its tasks wait, queued,
     * until it is resumed; attempts already running finish.
     * </pre>
     */
    default void suspendTenant(dev.taskyard.v1.SuspendTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.SuspendTenantResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSuspendTenantMethod(), responseObserver);
    }

    /**
     */
    default void resumeTenant(dev.taskyard.v1.ResumeTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeTenantResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getResumeTenantMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service TenantService.
   * <pre>
   * Tenants: teams or customers sharing one suite. A token belongs to one tenant
   * (the tokens file's `tenant=NAME` field) or is an operator token over all of
   * them. A tenant token sees and changes its own tenant's tasks, queues,
   * schedules, limits and events only; another tenant's task id answers
   * NOT_FOUND exactly as a missing one does. An operator token acts on every
   * tenant, or on one when the call carries the `taskyard-tenant` metadata key.
   * Every RPC here but GetTenant (a tenant token may read its own) is for
   * operator tokens only: PERMISSION_DENIED, reason OPERATOR_ONLY, for a tenant
   * token. Changes appear on WatchEvents (EVENT_KIND_TENANT).
   * </pre>
   */
  public static abstract class TenantServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return TenantServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service TenantService.
   * <pre>
   * Tenants: teams or customers sharing one suite. A token belongs to one tenant
   * (the tokens file's `tenant=NAME` field) or is an operator token over all of
   * them. A tenant token sees and changes its own tenant's tasks, queues,
   * schedules, limits and events only; another tenant's task id answers
   * NOT_FOUND exactly as a missing one does. An operator token acts on every
   * tenant, or on one when the call carries the `taskyard-tenant` metadata key.
   * Every RPC here but GetTenant (a tenant token may read its own) is for
   * operator tokens only: PERMISSION_DENIED, reason OPERATOR_ONLY, for a tenant
   * token. Changes appear on WatchEvents (EVENT_KIND_TENANT).
   * </pre>
   */
  public static final class TenantServiceStub
      extends io.grpc.stub.AbstractAsyncStub<TenantServiceStub> {
    private TenantServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TenantServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TenantServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    public void createTenant(dev.taskyard.v1.CreateTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CreateTenantResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateTenantMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * NOT_FOUND when there is none (or, for a tenant token, when it is not its own).
     * </pre>
     */
    public void getTenant(dev.taskyard.v1.GetTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTenantResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetTenantMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * By name; keyset pagination.
     * </pre>
     */
    public void listTenants(dev.taskyard.v1.ListTenantsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListTenantsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListTenantsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Replaces the quota, the weight and the description; NOT_FOUND when there is none.
     * </pre>
     */
    public void updateTenant(dev.taskyard.v1.UpdateTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.UpdateTenantResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateTenantMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Stops the tenant's dispatch and refuses its submissions (FAILED_PRECONDITION,
     * reason TENANT_SUSPENDED). Nothing it had is lost: its tasks wait, queued,
     * until it is resumed; attempts already running finish.
     * </pre>
     */
    public void suspendTenant(dev.taskyard.v1.SuspendTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.SuspendTenantResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSuspendTenantMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void resumeTenant(dev.taskyard.v1.ResumeTenantRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeTenantResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getResumeTenantMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service TenantService.
   * <pre>
   * Tenants: teams or customers sharing one suite. A token belongs to one tenant
   * (the tokens file's `tenant=NAME` field) or is an operator token over all of
   * them. A tenant token sees and changes its own tenant's tasks, queues,
   * schedules, limits and events only; another tenant's task id answers
   * NOT_FOUND exactly as a missing one does. An operator token acts on every
   * tenant, or on one when the call carries the `taskyard-tenant` metadata key.
   * Every RPC here but GetTenant (a tenant token may read its own) is for
   * operator tokens only: PERMISSION_DENIED, reason OPERATOR_ONLY, for a tenant
   * token. Changes appear on WatchEvents (EVENT_KIND_TENANT).
   * </pre>
   */
  public static final class TenantServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<TenantServiceBlockingV2Stub> {
    private TenantServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TenantServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TenantServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    public dev.taskyard.v1.CreateTenantResponse createTenant(dev.taskyard.v1.CreateTenantRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCreateTenantMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * NOT_FOUND when there is none (or, for a tenant token, when it is not its own).
     * </pre>
     */
    public dev.taskyard.v1.GetTenantResponse getTenant(dev.taskyard.v1.GetTenantRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetTenantMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * By name; keyset pagination.
     * </pre>
     */
    public dev.taskyard.v1.ListTenantsResponse listTenants(dev.taskyard.v1.ListTenantsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListTenantsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Replaces the quota, the weight and the description; NOT_FOUND when there is none.
     * </pre>
     */
    public dev.taskyard.v1.UpdateTenantResponse updateTenant(dev.taskyard.v1.UpdateTenantRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUpdateTenantMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Stops the tenant's dispatch and refuses its submissions (FAILED_PRECONDITION,
     * reason TENANT_SUSPENDED). Nothing it had is lost: its tasks wait, queued,
     * until it is resumed; attempts already running finish.
     * </pre>
     */
    public dev.taskyard.v1.SuspendTenantResponse suspendTenant(dev.taskyard.v1.SuspendTenantRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSuspendTenantMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ResumeTenantResponse resumeTenant(dev.taskyard.v1.ResumeTenantRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getResumeTenantMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service TenantService.
   * <pre>
   * Tenants: teams or customers sharing one suite. A token belongs to one tenant
   * (the tokens file's `tenant=NAME` field) or is an operator token over all of
   * them. A tenant token sees and changes its own tenant's tasks, queues,
   * schedules, limits and events only; another tenant's task id answers
   * NOT_FOUND exactly as a missing one does. An operator token acts on every
   * tenant, or on one when the call carries the `taskyard-tenant` metadata key.
   * Every RPC here but GetTenant (a tenant token may read its own) is for
   * operator tokens only: PERMISSION_DENIED, reason OPERATOR_ONLY, for a tenant
   * token. Changes appear on WatchEvents (EVENT_KIND_TENANT).
   * </pre>
   */
  public static final class TenantServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<TenantServiceBlockingStub> {
    private TenantServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TenantServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TenantServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    public dev.taskyard.v1.CreateTenantResponse createTenant(dev.taskyard.v1.CreateTenantRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateTenantMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * NOT_FOUND when there is none (or, for a tenant token, when it is not its own).
     * </pre>
     */
    public dev.taskyard.v1.GetTenantResponse getTenant(dev.taskyard.v1.GetTenantRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetTenantMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * By name; keyset pagination.
     * </pre>
     */
    public dev.taskyard.v1.ListTenantsResponse listTenants(dev.taskyard.v1.ListTenantsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListTenantsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Replaces the quota, the weight and the description; NOT_FOUND when there is none.
     * </pre>
     */
    public dev.taskyard.v1.UpdateTenantResponse updateTenant(dev.taskyard.v1.UpdateTenantRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateTenantMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Stops the tenant's dispatch and refuses its submissions (FAILED_PRECONDITION,
     * reason TENANT_SUSPENDED). Nothing it had is lost: its tasks wait, queued,
     * until it is resumed; attempts already running finish.
     * </pre>
     */
    public dev.taskyard.v1.SuspendTenantResponse suspendTenant(dev.taskyard.v1.SuspendTenantRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSuspendTenantMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ResumeTenantResponse resumeTenant(dev.taskyard.v1.ResumeTenantRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getResumeTenantMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service TenantService.
   * <pre>
   * Tenants: teams or customers sharing one suite. A token belongs to one tenant
   * (the tokens file's `tenant=NAME` field) or is an operator token over all of
   * them. A tenant token sees and changes its own tenant's tasks, queues,
   * schedules, limits and events only; another tenant's task id answers
   * NOT_FOUND exactly as a missing one does. An operator token acts on every
   * tenant, or on one when the call carries the `taskyard-tenant` metadata key.
   * Every RPC here but GetTenant (a tenant token may read its own) is for
   * operator tokens only: PERMISSION_DENIED, reason OPERATOR_ONLY, for a tenant
   * token. Changes appear on WatchEvents (EVENT_KIND_TENANT).
   * </pre>
   */
  public static final class TenantServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<TenantServiceFutureStub> {
    private TenantServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TenantServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TenantServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS when the name is taken.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.CreateTenantResponse> createTenant(
        dev.taskyard.v1.CreateTenantRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateTenantMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * NOT_FOUND when there is none (or, for a tenant token, when it is not its own).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.GetTenantResponse> getTenant(
        dev.taskyard.v1.GetTenantRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetTenantMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * By name; keyset pagination.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListTenantsResponse> listTenants(
        dev.taskyard.v1.ListTenantsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListTenantsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Replaces the quota, the weight and the description; NOT_FOUND when there is none.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.UpdateTenantResponse> updateTenant(
        dev.taskyard.v1.UpdateTenantRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateTenantMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Stops the tenant's dispatch and refuses its submissions (FAILED_PRECONDITION,
     * reason TENANT_SUSPENDED). Nothing it had is lost: its tasks wait, queued,
     * until it is resumed; attempts already running finish.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.SuspendTenantResponse> suspendTenant(
        dev.taskyard.v1.SuspendTenantRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSuspendTenantMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ResumeTenantResponse> resumeTenant(
        dev.taskyard.v1.ResumeTenantRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getResumeTenantMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_CREATE_TENANT = 0;
  private static final int METHODID_GET_TENANT = 1;
  private static final int METHODID_LIST_TENANTS = 2;
  private static final int METHODID_UPDATE_TENANT = 3;
  private static final int METHODID_SUSPEND_TENANT = 4;
  private static final int METHODID_RESUME_TENANT = 5;

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
        case METHODID_CREATE_TENANT:
          serviceImpl.createTenant((dev.taskyard.v1.CreateTenantRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.CreateTenantResponse>) responseObserver);
          break;
        case METHODID_GET_TENANT:
          serviceImpl.getTenant((dev.taskyard.v1.GetTenantRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTenantResponse>) responseObserver);
          break;
        case METHODID_LIST_TENANTS:
          serviceImpl.listTenants((dev.taskyard.v1.ListTenantsRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListTenantsResponse>) responseObserver);
          break;
        case METHODID_UPDATE_TENANT:
          serviceImpl.updateTenant((dev.taskyard.v1.UpdateTenantRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.UpdateTenantResponse>) responseObserver);
          break;
        case METHODID_SUSPEND_TENANT:
          serviceImpl.suspendTenant((dev.taskyard.v1.SuspendTenantRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.SuspendTenantResponse>) responseObserver);
          break;
        case METHODID_RESUME_TENANT:
          serviceImpl.resumeTenant((dev.taskyard.v1.ResumeTenantRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeTenantResponse>) responseObserver);
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
          getCreateTenantMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.CreateTenantRequest,
              dev.taskyard.v1.CreateTenantResponse>(
                service, METHODID_CREATE_TENANT)))
        .addMethod(
          getGetTenantMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.GetTenantRequest,
              dev.taskyard.v1.GetTenantResponse>(
                service, METHODID_GET_TENANT)))
        .addMethod(
          getListTenantsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListTenantsRequest,
              dev.taskyard.v1.ListTenantsResponse>(
                service, METHODID_LIST_TENANTS)))
        .addMethod(
          getUpdateTenantMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.UpdateTenantRequest,
              dev.taskyard.v1.UpdateTenantResponse>(
                service, METHODID_UPDATE_TENANT)))
        .addMethod(
          getSuspendTenantMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.SuspendTenantRequest,
              dev.taskyard.v1.SuspendTenantResponse>(
                service, METHODID_SUSPEND_TENANT)))
        .addMethod(
          getResumeTenantMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ResumeTenantRequest,
              dev.taskyard.v1.ResumeTenantResponse>(
                service, METHODID_RESUME_TENANT)))
        .build();
  }

  private static abstract class TenantServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    TenantServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.taskyard.v1.TenantServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("TenantService");
    }
  }

  private static final class TenantServiceFileDescriptorSupplier
      extends TenantServiceBaseDescriptorSupplier {
    TenantServiceFileDescriptorSupplier() {}
  }

  private static final class TenantServiceMethodDescriptorSupplier
      extends TenantServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    TenantServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (TenantServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new TenantServiceFileDescriptorSupplier())
              .addMethod(getCreateTenantMethod())
              .addMethod(getGetTenantMethod())
              .addMethod(getListTenantsMethod())
              .addMethod(getUpdateTenantMethod())
              .addMethod(getSuspendTenantMethod())
              .addMethod(getResumeTenantMethod())
              .build();
        }
      }
    }
    return result;
  }
}
