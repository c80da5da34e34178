package dev.taskyard.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Dead letters and their redrive. A task whose failure is final (retries
 * spent, quarantined after its worker died under it too often, or a failure
 * it marked not retryable) is dead-lettered: it keeps state FAILURE, carries a
 * DeadLetterReason, and is kept past the retention window until a redrive
 * takes it or PurgeDeadLetters deletes it.
 * Every failure has a fingerprint: its exception type, its message with
 * numbers, ids and quoted values masked, and the innermost frame of the task's
 * own code. Dead letters of one queue, task name and fingerprint form a group.
 * Reading takes the `read` scope; Redrive, its controls and PurgeDeadLetters
 * take `admin`.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class FailureServiceGrpc {

  private FailureServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "taskyard.v1.FailureService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListFailureGroupsRequest,
      dev.taskyard.v1.ListFailureGroupsResponse> getListFailureGroupsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListFailureGroups",
      requestType = dev.taskyard.v1.ListFailureGroupsRequest.class,
      responseType = dev.taskyard.v1.ListFailureGroupsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListFailureGroupsRequest,
      dev.taskyard.v1.ListFailureGroupsResponse> getListFailureGroupsMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListFailureGroupsRequest, dev.taskyard.v1.ListFailureGroupsResponse> getListFailureGroupsMethod;
    if ((getListFailureGroupsMethod = FailureServiceGrpc.getListFailureGroupsMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getListFailureGroupsMethod = FailureServiceGrpc.getListFailureGroupsMethod) == null) {
          FailureServiceGrpc.getListFailureGroupsMethod = getListFailureGroupsMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListFailureGroupsRequest, dev.taskyard.v1.ListFailureGroupsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListFailureGroups"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListFailureGroupsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListFailureGroupsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("ListFailureGroups"))
              .build();
        }
      }
    }
    return getListFailureGroupsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListFailuresRequest,
      dev.taskyard.v1.ListFailuresResponse> getListFailuresMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListFailures",
      requestType = dev.taskyard.v1.ListFailuresRequest.class,
      responseType = dev.taskyard.v1.ListFailuresResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListFailuresRequest,
      dev.taskyard.v1.ListFailuresResponse> getListFailuresMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListFailuresRequest, dev.taskyard.v1.ListFailuresResponse> getListFailuresMethod;
    if ((getListFailuresMethod = FailureServiceGrpc.getListFailuresMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getListFailuresMethod = FailureServiceGrpc.getListFailuresMethod) == null) {
          FailureServiceGrpc.getListFailuresMethod = getListFailuresMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListFailuresRequest, dev.taskyard.v1.ListFailuresResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListFailures"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListFailuresRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListFailuresResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("ListFailures"))
              .build();
        }
      }
    }
    return getListFailuresMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.RedriveRequest,
      dev.taskyard.v1.RedriveResponse> getRedriveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Redrive",
      requestType = dev.taskyard.v1.RedriveRequest.class,
      responseType = dev.taskyard.v1.RedriveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.RedriveRequest,
      dev.taskyard.v1.RedriveResponse> getRedriveMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.RedriveRequest, dev.taskyard.v1.RedriveResponse> getRedriveMethod;
    if ((getRedriveMethod = FailureServiceGrpc.getRedriveMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getRedriveMethod = FailureServiceGrpc.getRedriveMethod) == null) {
          FailureServiceGrpc.getRedriveMethod = getRedriveMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.RedriveRequest, dev.taskyard.v1.RedriveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Redrive"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.RedriveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.RedriveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("Redrive"))
              .build();
        }
      }
    }
    return getRedriveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.GetRedriveRequest,
      dev.taskyard.v1.GetRedriveResponse> getGetRedriveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetRedrive",
      requestType = dev.taskyard.v1.GetRedriveRequest.class,
      responseType = dev.taskyard.v1.GetRedriveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.GetRedriveRequest,
      dev.taskyard.v1.GetRedriveResponse> getGetRedriveMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.GetRedriveRequest, dev.taskyard.v1.GetRedriveResponse> getGetRedriveMethod;
    if ((getGetRedriveMethod = FailureServiceGrpc.getGetRedriveMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getGetRedriveMethod = FailureServiceGrpc.getGetRedriveMethod) == null) {
          FailureServiceGrpc.getGetRedriveMethod = getGetRedriveMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.GetRedriveRequest, dev.taskyard.v1.GetRedriveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetRedrive"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetRedriveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetRedriveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("GetRedrive"))
              .build();
        }
      }
    }
    return getGetRedriveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListRedrivesRequest,
      dev.taskyard.v1.ListRedrivesResponse> getListRedrivesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListRedrives",
      requestType = dev.taskyard.v1.ListRedrivesRequest.class,
      responseType = dev.taskyard.v1.ListRedrivesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListRedrivesRequest,
      dev.taskyard.v1.ListRedrivesResponse> getListRedrivesMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListRedrivesRequest, dev.taskyard.v1.ListRedrivesResponse> getListRedrivesMethod;
    if ((getListRedrivesMethod = FailureServiceGrpc.getListRedrivesMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getListRedrivesMethod = FailureServiceGrpc.getListRedrivesMethod) == null) {
          FailureServiceGrpc.getListRedrivesMethod = getListRedrivesMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListRedrivesRequest, dev.taskyard.v1.ListRedrivesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListRedrives"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListRedrivesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListRedrivesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("ListRedrives"))
              .build();
        }
      }
    }
    return getListRedrivesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListRedriveItemsRequest,
      dev.taskyard.v1.ListRedriveItemsResponse> getListRedriveItemsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListRedriveItems",
      requestType = dev.taskyard.v1.ListRedriveItemsRequest.class,
      responseType = dev.taskyard.v1.ListRedriveItemsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListRedriveItemsRequest,
      dev.taskyard.v1.ListRedriveItemsResponse> getListRedriveItemsMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListRedriveItemsRequest, dev.taskyard.v1.ListRedriveItemsResponse> getListRedriveItemsMethod;
    if ((getListRedriveItemsMethod = FailureServiceGrpc.getListRedriveItemsMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getListRedriveItemsMethod = FailureServiceGrpc.getListRedriveItemsMethod) == null) {
          FailureServiceGrpc.getListRedriveItemsMethod = getListRedriveItemsMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListRedriveItemsRequest, dev.taskyard.v1.ListRedriveItemsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListRedriveItems"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListRedriveItemsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListRedriveItemsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("ListRedriveItems"))
              .build();
        }
      }
    }
    return getListRedriveItemsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.PauseRedriveRequest,
      dev.taskyard.v1.PauseRedriveResponse> getPauseRedriveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PauseRedrive",
      requestType = dev.taskyard.v1.PauseRedriveRequest.class,
      responseType = dev.taskyard.v1.PauseRedriveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.PauseRedriveRequest,
      dev.taskyard.v1.PauseRedriveResponse> getPauseRedriveMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.PauseRedriveRequest, dev.taskyard.v1.PauseRedriveResponse> getPauseRedriveMethod;
    if ((getPauseRedriveMethod = FailureServiceGrpc.getPauseRedriveMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getPauseRedriveMethod = FailureServiceGrpc.getPauseRedriveMethod) == null) {
          FailureServiceGrpc.getPauseRedriveMethod = getPauseRedriveMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.PauseRedriveRequest, dev.taskyard.v1.PauseRedriveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PauseRedrive"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PauseRedriveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PauseRedriveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("PauseRedrive"))
              .build();
        }
      }
    }
    return getPauseRedriveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeRedriveRequest,
      dev.taskyard.v1.ResumeRedriveResponse> getResumeRedriveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ResumeRedrive",
      requestType = dev.taskyard.v1.ResumeRedriveRequest.class,
      responseType = dev.taskyard.v1.ResumeRedriveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeRedriveRequest,
      dev.taskyard.v1.ResumeRedriveResponse> getResumeRedriveMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ResumeRedriveRequest, dev.taskyard.v1.ResumeRedriveResponse> getResumeRedriveMethod;
    if ((getResumeRedriveMethod = FailureServiceGrpc.getResumeRedriveMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getResumeRedriveMethod = FailureServiceGrpc.getResumeRedriveMethod) == null) {
          FailureServiceGrpc.getResumeRedriveMethod = getResumeRedriveMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ResumeRedriveRequest, dev.taskyard.v1.ResumeRedriveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ResumeRedrive"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ResumeRedriveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ResumeRedriveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("ResumeRedrive"))
              .build();
        }
      }
    }
    return getResumeRedriveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.CancelRedriveRequest,
      dev.taskyard.v1.CancelRedriveResponse> getCancelRedriveMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CancelRedrive",
      requestType = dev.taskyard.v1.CancelRedriveRequest.class,
      responseType = dev.taskyard.v1.CancelRedriveResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.CancelRedriveRequest,
      dev.taskyard.v1.CancelRedriveResponse> getCancelRedriveMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.CancelRedriveRequest, dev.taskyard.v1.CancelRedriveResponse> getCancelRedriveMethod;
    if ((getCancelRedriveMethod = FailureServiceGrpc.getCancelRedriveMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getCancelRedriveMethod = FailureServiceGrpc.getCancelRedriveMethod) == null) {
          FailureServiceGrpc.getCancelRedriveMethod = getCancelRedriveMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.CancelRedriveRequest, dev.taskyard.v1.CancelRedriveResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CancelRedrive"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CancelRedriveRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CancelRedriveResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("CancelRedrive"))
              .build();
        }
      }
    }
    return getCancelRedriveMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.PurgeDeadLettersRequest,
      dev.taskyard.v1.PurgeDeadLettersResponse> getPurgeDeadLettersMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PurgeDeadLetters",
      requestType = dev.taskyard.v1.PurgeDeadLettersRequest.class,
      responseType = dev.taskyard.v1.PurgeDeadLettersResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.PurgeDeadLettersRequest,
      dev.taskyard.v1.PurgeDeadLettersResponse> getPurgeDeadLettersMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.PurgeDeadLettersRequest, dev.taskyard.v1.PurgeDeadLettersResponse> getPurgeDeadLettersMethod;
    if ((getPurgeDeadLettersMethod = FailureServiceGrpc.getPurgeDeadLettersMethod) == null) {
      synchronized (FailureServiceGrpc.class) {
        if ((getPurgeDeadLettersMethod = FailureServiceGrpc.getPurgeDeadLettersMethod) == null) {
          FailureServiceGrpc.getPurgeDeadLettersMethod = getPurgeDeadLettersMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.PurgeDeadLettersRequest, dev.taskyard.v1.PurgeDeadLettersResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PurgeDeadLetters"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PurgeDeadLettersRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.PurgeDeadLettersResponse.getDefaultInstance()))
              .setSchemaDescriptor(new FailureServiceMethodDescriptorSupplier("PurgeDeadLetters"))
              .build();
        }
      }
    }
    return getPurgeDeadLettersMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static FailureServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<FailureServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<FailureServiceStub>() {
        @java.lang.Override
        public FailureServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new FailureServiceStub(channel, callOptions);
        }
      };
    return FailureServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static FailureServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<FailureServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<FailureServiceBlockingV2Stub>() {
        @java.lang.Override
        public FailureServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new FailureServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return FailureServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static FailureServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<FailureServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<FailureServiceBlockingStub>() {
        @java.lang.Override
        public FailureServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new FailureServiceBlockingStub(channel, callOptions);
        }
      };
    return FailureServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static FailureServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<FailureServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<FailureServiceFutureStub>() {
        @java.lang.Override
        public FailureServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new FailureServiceFutureStub(channel, callOptions);
        }
      };
    return FailureServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Dead letters and their redrive. A task whose failure is final (retries
   * spent, quarantined after its worker died under it too often, or a failure
   * it marked not retryable) is dead-lettered: it keeps state FAILURE, carries a
   * DeadLetterReason, and is kept past the retention window until a redrive
   * takes it or PurgeDeadLetters deletes it.
   * Every failure has a fingerprint: its exception type, its message with
   * numbers, ids and quoted values masked, and the innermost frame of the task's
   * own code. Dead letters of one queue, task name and fingerprint form a group.
   * Reading takes the `read` scope; Redrive, its controls and PurgeDeadLetters
   * take `admin`.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Groups of dead letters, most dead letters first.
     * </pre>
     */
    default void listFailureGroups(dev.taskyard.v1.ListFailureGroupsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListFailureGroupsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListFailureGroupsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Dead-lettered tasks matching a filter (typically one group), newest
     * failure first, paged.
     * </pre>
     */
    default void listFailures(dev.taskyard.v1.ListFailuresRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListFailuresResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListFailuresMethod(), responseObserver);
    }

    /**
     * <pre>
     * Re-queue the dead letters a filter matches, at most `rate` a second, as a
     * new attempt each. The set is fixed when the call is accepted; the leading
     * scheduler runs it, and it goes on across a restart of any service. A dry
     * run changes nothing and answers with the count and a sample. A dead letter
     * pending in another RUNNING or PAUSED redrive is left out (named by id:
     * FAILED_PRECONDITION naming that redrive); at most 100 redrives are RUNNING
     * or PAUSED at once (one more is FAILED_PRECONDITION). The retry budget of
     * each task re-queued starts again.
     * </pre>
     */
    default void redrive(dev.taskyard.v1.RedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.RedriveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRedriveMethod(), responseObserver);
    }

    /**
     */
    default void getRedrive(dev.taskyard.v1.GetRedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetRedriveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetRedriveMethod(), responseObserver);
    }

    /**
     * <pre>
     * Newest first.
     * </pre>
     */
    default void listRedrives(dev.taskyard.v1.ListRedrivesRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListRedrivesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListRedrivesMethod(), responseObserver);
    }

    /**
     * <pre>
     * The audit of one redrive: what became of each task it matched.
     * </pre>
     */
    default void listRedriveItems(dev.taskyard.v1.ListRedriveItemsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListRedriveItemsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListRedriveItemsMethod(), responseObserver);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless RUNNING.
     * </pre>
     */
    default void pauseRedrive(dev.taskyard.v1.PauseRedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PauseRedriveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPauseRedriveMethod(), responseObserver);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless PAUSED.
     * </pre>
     */
    default void resumeRedrive(dev.taskyard.v1.ResumeRedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeRedriveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getResumeRedriveMethod(), responseObserver);
    }

    /**
     * <pre>
     * Tasks not redriven yet stay dead letters. FAILED_PRECONDITION once DONE
     * or CANCELLED.
     * </pre>
     */
    default void cancelRedrive(dev.taskyard.v1.CancelRedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CancelRedriveResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCancelRedriveMethod(), responseObserver);
    }

    /**
     * <pre>
     * Delete dead letters a filter matches (with their logs), now.
     * </pre>
     */
    default void purgeDeadLetters(dev.taskyard.v1.PurgeDeadLettersRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PurgeDeadLettersResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPurgeDeadLettersMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service FailureService.
   * <pre>
   * Dead letters and their redrive. A task whose failure is final (retries
   * spent, quarantined after its worker died under it too often, or a failure
   * it marked not retryable) is dead-lettered: it keeps state FAILURE, carries a
   * DeadLetterReason, and is kept past the retention window until a redrive
   * takes it or PurgeDeadLetters deletes it.
   * Every failure has a fingerprint: its exception type, its message with
   * numbers, ids and quoted values masked, and the innermost frame of the task's
   * own code. Dead letters of one queue, task name and fingerprint form a group.
   * Reading takes the `read` scope; Redrive, its controls and PurgeDeadLetters
   * take `admin`.
   * </pre>
   */
  public static abstract class FailureServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return FailureServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service FailureService.
   * <pre>
   * Dead letters and their redrive. A task whose failure is final (retries
   * spent, quarantined after its worker died under it too often, or a failure
   * it marked not retryable) is dead-lettered: it keeps state FAILURE, carries a
   * DeadLetterReason, and is kept past the retention window until a redrive
   * takes it or PurgeDeadLetters deletes it.
   * Every failure has a fingerprint: its exception type, its message with
   * numbers, ids and quoted values masked, and the innermost frame of the task's
   * own code. Dead letters of one queue, task name and fingerprint form a group.
   * Reading takes the `read` scope; Redrive, its controls and PurgeDeadLetters
   * take `admin`.
   * </pre>
   */
  public static final class FailureServiceStub
      extends io.grpc.stub.AbstractAsyncStub<FailureServiceStub> {
    private FailureServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected FailureServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new FailureServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Groups of dead letters, most dead letters first.
     * </pre>
     */
    public void listFailureGroups(dev.taskyard.v1.ListFailureGroupsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListFailureGroupsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListFailureGroupsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Dead-lettered tasks matching a filter (typically one group), newest
     * failure first, paged.
     * </pre>
     */
    public void listFailures(dev.taskyard.v1.ListFailuresRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListFailuresResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListFailuresMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Re-queue the dead letters a filter matches, at most `rate` a second, as a
     * new attempt each. The set is fixed when the call is accepted; the leading
     * scheduler runs it, and it goes on across a restart of any service. A dry
     * run changes nothing and answers with the count and a sample. A dead letter
     * pending in another RUNNING or PAUSED redrive is left out (named by id:
     * FAILED_PRECONDITION naming that redrive); at most 100 redrives are RUNNING
     * or PAUSED at once (one more is FAILED_PRECONDITION). The retry budget of
     * each task re-queued starts again.
     * </pre>
     */
    public void redrive(dev.taskyard.v1.RedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.RedriveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRedriveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getRedrive(dev.taskyard.v1.GetRedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetRedriveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetRedriveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Newest first.
     * </pre>
     */
    public void listRedrives(dev.taskyard.v1.ListRedrivesRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListRedrivesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListRedrivesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * The audit of one redrive: what became of each task it matched.
     * </pre>
     */
    public void listRedriveItems(dev.taskyard.v1.ListRedriveItemsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListRedriveItemsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListRedriveItemsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless RUNNING.
     * </pre>
     */
    public void pauseRedrive(dev.taskyard.v1.PauseRedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PauseRedriveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPauseRedriveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless PAUSED.
     * </pre>
     */
    public void resumeRedrive(dev.taskyard.v1.ResumeRedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeRedriveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getResumeRedriveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Tasks not redriven yet stay dead letters. FAILED_PRECONDITION once DONE
     * or CANCELLED.
     * </pre>
     */
    public void cancelRedrive(dev.taskyard.v1.CancelRedriveRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CancelRedriveResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCancelRedriveMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Delete dead letters a filter matches (with their logs), now.
     * </pre>
     */
    public void purgeDeadLetters(dev.taskyard.v1.PurgeDeadLettersRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.PurgeDeadLettersResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPurgeDeadLettersMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service FailureService.
   * <pre>
   * Dead letters and their redrive. A task whose failure is final (retries
   * spent, quarantined after its worker died under it too often, or a failure
   * it marked not retryable) is dead-lettered: it keeps state FAILURE, carries a
   * DeadLetterReason, and is kept past the retention window until a redrive
   * takes it or PurgeDeadLetters deletes it.
   * Every failure has a fingerprint: its exception type, its message with
   * numbers, ids and quoted values masked, and the innermost frame of the task's
   * own code. Dead letters of one queue, task name and fingerprint form a group.
   * Reading takes the `read` scope; Redrive, its controls and PurgeDeadLetters
   * take `admin`.
   * </pre>
   */
  public static final class FailureServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<FailureServiceBlockingV2Stub> {
    private FailureServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected FailureServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new FailureServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Groups of dead letters, most dead letters first.
     * </pre>
     */
    public dev.taskyard.v1.ListFailureGroupsResponse listFailureGroups(dev.taskyard.v1.ListFailureGroupsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListFailureGroupsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Dead-lettered tasks matching a filter (typically one group), newest
     * failure first, paged.
     * </pre>
     */
    public dev.taskyard.v1.ListFailuresResponse listFailures(dev.taskyard.v1.ListFailuresRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListFailuresMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Re-queue the dead letters a filter matches, at most `rate` a second, as a
     * new attempt each. The set is fixed when the call is accepted; the leading
     * scheduler runs it, and it goes on across a restart of any service. A dry
     * run changes nothing and answers with the count and a sample. A dead letter
     * pending in another RUNNING or PAUSED redrive is left out (named by id:
     * FAILED_PRECONDITION naming that redrive); at most 100 redrives are RUNNING
     * or PAUSED at once (one more is FAILED_PRECONDITION). The retry budget of
     * each task re-queued starts again.
     * </pre>
     */
    public dev.taskyard.v1.RedriveResponse redrive(dev.taskyard.v1.RedriveRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRedriveMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.GetRedriveResponse getRedrive(dev.taskyard.v1.GetRedriveRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetRedriveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Newest first.
     * </pre>
     */
    public dev.taskyard.v1.ListRedrivesResponse listRedrives(dev.taskyard.v1.ListRedrivesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListRedrivesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The audit of one redrive: what became of each task it matched.
     * </pre>
     */
    public dev.taskyard.v1.ListRedriveItemsResponse listRedriveItems(dev.taskyard.v1.ListRedriveItemsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListRedriveItemsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless RUNNING.
     * </pre>
     */
    public dev.taskyard.v1.PauseRedriveResponse pauseRedrive(dev.taskyard.v1.PauseRedriveRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPauseRedriveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless PAUSED.
     * </pre>
     */
    public dev.taskyard.v1.ResumeRedriveResponse resumeRedrive(dev.taskyard.v1.ResumeRedriveRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getResumeRedriveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Tasks not redriven yet stay dead letters. FAILED_PRECONDITION once DONE
     * or CANCELLED.
     * </pre>
     */
    public dev.taskyard.v1.CancelRedriveResponse cancelRedrive(dev.taskyard.v1.CancelRedriveRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCancelRedriveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Delete dead letters a filter matches (with their logs), now.
     * </pre>
     */
    public dev.taskyard.v1.PurgeDeadLettersResponse purgeDeadLetters(dev.taskyard.v1.PurgeDeadLettersRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPurgeDeadLettersMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service FailureService.
   * <pre>
   * Dead letters and their redrive. A task whose failure is final (retries
   * spent, quarantined after its worker died under it too often, or a failure
   * it marked not retryable) is dead-lettered: it keeps state FAILURE, carries a
   * DeadLetterReason, and is kept past the retention window until a redrive
   * takes it or PurgeDeadLetters deletes it.
   * Every failure has a fingerprint: its exception type, its message with
   * numbers, ids and quoted values masked, and the innermost frame of the task's
   * own code. Dead letters of one queue, task name and fingerprint form a group.
   * Reading takes the `read` scope; Redrive, its controls and PurgeDeadLetters
   * take `admin`.
   * </pre>
   */
  public static final class FailureServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<FailureServiceBlockingStub> {
    private FailureServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected FailureServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new FailureServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Groups of dead letters, most dead letters first.
     * </pre>
     */
    public dev.taskyard.v1.ListFailureGroupsResponse listFailureGroups(dev.taskyard.v1.ListFailureGroupsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListFailureGroupsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Dead-lettered tasks matching a filter (typically one group), newest
     * failure first, paged.
     * </pre>
     */
    public dev.taskyard.v1.ListFailuresResponse listFailures(dev.taskyard.v1.ListFailuresRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListFailuresMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Re-queue the dead letters a filter matches, at most `rate` a second, as a
     * new attempt each. The set is fixed when the call is accepted; the leading
     * scheduler runs it, and it goes on across a restart of any service. A dry
     * run changes nothing and answers with the count and a sample. A dead letter
     * pending in another RUNNING or PAUSED redrive is left out (named by id:
     * FAILED_PRECONDITION naming that redrive); at most 100 redrives are RUNNING
     * or PAUSED at once (one more is FAILED_PRECONDITION). The retry budget of
     * each task re-queued starts again.
     * </pre>
     */
    public dev.taskyard.v1.RedriveResponse redrive(dev.taskyard.v1.RedriveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRedriveMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.GetRedriveResponse getRedrive(dev.taskyard.v1.GetRedriveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetRedriveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Newest first.
     * </pre>
     */
    public dev.taskyard.v1.ListRedrivesResponse listRedrives(dev.taskyard.v1.ListRedrivesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListRedrivesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * The audit of one redrive: what became of each task it matched.
     * </pre>
     */
    public dev.taskyard.v1.ListRedriveItemsResponse listRedriveItems(dev.taskyard.v1.ListRedriveItemsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListRedriveItemsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless RUNNING.
     * </pre>
     */
    public dev.taskyard.v1.PauseRedriveResponse pauseRedrive(dev.taskyard.v1.PauseRedriveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPauseRedriveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless PAUSED.
     * </pre>
     */
    public dev.taskyard.v1.ResumeRedriveResponse resumeRedrive(dev.taskyard.v1.ResumeRedriveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getResumeRedriveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Tasks not redriven yet stay dead letters. FAILED_PRECONDITION once DONE
     * or CANCELLED.
     * </pre>
     */
    public dev.taskyard.v1.CancelRedriveResponse cancelRedrive(dev.taskyard.v1.CancelRedriveRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCancelRedriveMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Delete dead letters a filter matches (with their logs), now.
     * </pre>
     */
    public dev.taskyard.v1.PurgeDeadLettersResponse purgeDeadLetters(dev.taskyard.v1.PurgeDeadLettersRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPurgeDeadLettersMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service FailureService.
   * <pre>
   * Dead letters and their redrive. A task whose failure is final (retries
   * spent, quarantined after its worker died under it too often, or a failure
   * it marked not retryable) is dead-lettered: it keeps state FAILURE, carries a
   * DeadLetterReason, and is kept past the retention window until a redrive
   * takes it or PurgeDeadLetters deletes it.
   * Every failure has a fingerprint: its exception type, its message with
   * numbers, ids and quoted values masked, and the innermost frame of the task's
   * own code. Dead letters of one queue, task name and fingerprint form a group.
   * Reading takes the `read` scope; Redrive, its controls and PurgeDeadLetters
   * take `admin`.
   * </pre>
   */
  public static final class FailureServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<FailureServiceFutureStub> {
    private FailureServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected FailureServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new FailureServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Groups of dead letters, most dead letters first.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListFailureGroupsResponse> listFailureGroups(
        dev.taskyard.v1.ListFailureGroupsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListFailureGroupsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Dead-lettered tasks matching a filter (typically one group), newest
     * failure first, paged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListFailuresResponse> listFailures(
        dev.taskyard.v1.ListFailuresRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListFailuresMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Re-queue the dead letters a filter matches, at most `rate` a second, as a
     * new attempt each. The set is fixed when the call is accepted; the leading
     * scheduler runs it, and it goes on across a restart of any service. A dry
     * run changes nothing and answers with the count and a sample. A dead letter
     * pending in another RUNNING or PAUSED redrive is left out (named by id:
     * FAILED_PRECONDITION naming that redrive); at most 100 redrives are RUNNING
     * or PAUSED at once (one more is FAILED_PRECONDITION). The retry budget of
     * each task re-queued starts again.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.RedriveResponse> redrive(
        dev.taskyard.v1.RedriveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRedriveMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.GetRedriveResponse> getRedrive(
        dev.taskyard.v1.GetRedriveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetRedriveMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Newest first.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListRedrivesResponse> listRedrives(
        dev.taskyard.v1.ListRedrivesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListRedrivesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * The audit of one redrive: what became of each task it matched.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListRedriveItemsResponse> listRedriveItems(
        dev.taskyard.v1.ListRedriveItemsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListRedriveItemsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless RUNNING.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.PauseRedriveResponse> pauseRedrive(
        dev.taskyard.v1.PauseRedriveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPauseRedriveMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * FAILED_PRECONDITION unless PAUSED.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ResumeRedriveResponse> resumeRedrive(
        dev.taskyard.v1.ResumeRedriveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getResumeRedriveMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Tasks not redriven yet stay dead letters. FAILED_PRECONDITION once DONE
     * or CANCELLED.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.CancelRedriveResponse> cancelRedrive(
        dev.taskyard.v1.CancelRedriveRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCancelRedriveMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Delete dead letters a filter matches (with their logs), now.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.PurgeDeadLettersResponse> purgeDeadLetters(
        dev.taskyard.v1.PurgeDeadLettersRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPurgeDeadLettersMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_LIST_FAILURE_GROUPS = 0;
  private static final int METHODID_LIST_FAILURES = 1;
  private static final int METHODID_REDRIVE = 2;
  private static final int METHODID_GET_REDRIVE = 3;
  private static final int METHODID_LIST_REDRIVES = 4;
  private static final int METHODID_LIST_REDRIVE_ITEMS = 5;
  private static final int METHODID_PAUSE_REDRIVE = 6;
  private static final int METHODID_RESUME_REDRIVE = 7;
  private static final int METHODID_CANCEL_REDRIVE = 8;
  private static final int METHODID_PURGE_DEAD_LETTERS = 9;

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
        case METHODID_LIST_FAILURE_GROUPS:
          serviceImpl.listFailureGroups((dev.taskyard.v1.ListFailureGroupsRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListFailureGroupsResponse>) responseObserver);
          break;
        case METHODID_LIST_FAILURES:
          serviceImpl.listFailures((dev.taskyard.v1.ListFailuresRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListFailuresResponse>) responseObserver);
          break;
        case METHODID_REDRIVE:
          serviceImpl.redrive((dev.taskyard.v1.RedriveRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.RedriveResponse>) responseObserver);
          break;
        case METHODID_GET_REDRIVE:
          serviceImpl.getRedrive((dev.taskyard.v1.GetRedriveRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.GetRedriveResponse>) responseObserver);
          break;
        case METHODID_LIST_REDRIVES:
          serviceImpl.listRedrives((dev.taskyard.v1.ListRedrivesRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListRedrivesResponse>) responseObserver);
          break;
        case METHODID_LIST_REDRIVE_ITEMS:
          serviceImpl.listRedriveItems((dev.taskyard.v1.ListRedriveItemsRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListRedriveItemsResponse>) responseObserver);
          break;
        case METHODID_PAUSE_REDRIVE:
          serviceImpl.pauseRedrive((dev.taskyard.v1.PauseRedriveRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.PauseRedriveResponse>) responseObserver);
          break;
        case METHODID_RESUME_REDRIVE:
          serviceImpl.resumeRedrive((dev.taskyard.v1.ResumeRedriveRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ResumeRedriveResponse>) responseObserver);
          break;
        case METHODID_CANCEL_REDRIVE:
          serviceImpl.cancelRedrive((dev.taskyard.v1.CancelRedriveRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.CancelRedriveResponse>) responseObserver);
          break;
        case METHODID_PURGE_DEAD_LETTERS:
          serviceImpl.purgeDeadLetters((dev.taskyard.v1.PurgeDeadLettersRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.PurgeDeadLettersResponse>) responseObserver);
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
          getListFailureGroupsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListFailureGroupsRequest,
              dev.taskyard.v1.ListFailureGroupsResponse>(
                service, METHODID_LIST_FAILURE_GROUPS)))
        .addMethod(
          getListFailuresMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListFailuresRequest,
              dev.taskyard.v1.ListFailuresResponse>(
                service, METHODID_LIST_FAILURES)))
        .addMethod(
          getRedriveMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.RedriveRequest,
              dev.taskyard.v1.RedriveResponse>(
                service, METHODID_REDRIVE)))
        .addMethod(
          getGetRedriveMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.GetRedriveRequest,
              dev.taskyard.v1.GetRedriveResponse>(
                service, METHODID_GET_REDRIVE)))
        .addMethod(
          getListRedrivesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListRedrivesRequest,
              dev.taskyard.v1.ListRedrivesResponse>(
                service, METHODID_LIST_REDRIVES)))
        .addMethod(
          getListRedriveItemsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListRedriveItemsRequest,
              dev.taskyard.v1.ListRedriveItemsResponse>(
                service, METHODID_LIST_REDRIVE_ITEMS)))
        .addMethod(
          getPauseRedriveMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.PauseRedriveRequest,
              dev.taskyard.v1.PauseRedriveResponse>(
                service, METHODID_PAUSE_REDRIVE)))
        .addMethod(
          getResumeRedriveMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ResumeRedriveRequest,
              dev.taskyard.v1.ResumeRedriveResponse>(
                service, METHODID_RESUME_REDRIVE)))
        .addMethod(
          getCancelRedriveMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.CancelRedriveRequest,
              dev.taskyard.v1.CancelRedriveResponse>(
                service, METHODID_CANCEL_REDRIVE)))
        .addMethod(
          getPurgeDeadLettersMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.PurgeDeadLettersRequest,
              dev.taskyard.v1.PurgeDeadLettersResponse>(
                service, METHODID_PURGE_DEAD_LETTERS)))
        .build();
  }

  private static abstract class FailureServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    FailureServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.taskyard.v1.FailureServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("FailureService");
    }
  }

  private static final class FailureServiceFileDescriptorSupplier
      extends FailureServiceBaseDescriptorSupplier {
    FailureServiceFileDescriptorSupplier() {}
  }

  private static final class FailureServiceMethodDescriptorSupplier
      extends FailureServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    FailureServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (FailureServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new FailureServiceFileDescriptorSupplier())
              .addMethod(getListFailureGroupsMethod())
              .addMethod(getListFailuresMethod())
              .addMethod(getRedriveMethod())
              .addMethod(getGetRedriveMethod())
              .addMethod(getListRedrivesMethod())
              .addMethod(getListRedriveItemsMethod())
              .addMethod(getPauseRedriveMethod())
              .addMethod(getResumeRedriveMethod())
              .addMethod(getCancelRedriveMethod())
              .addMethod(getPurgeDeadLettersMethod())
              .build();
        }
      }
    }
    return result;
  }
}
