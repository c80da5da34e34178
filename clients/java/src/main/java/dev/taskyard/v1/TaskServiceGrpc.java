package dev.taskyard.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Submit, inspect and cancel tasks.
 * Errors are google.rpc.Status with an ErrorInfo (domain "taskyard.dev") and,
 * for bad input, a BadRequest listing every field violation.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class TaskServiceGrpc {

  private TaskServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "taskyard.v1.TaskService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.SubmitTaskRequest,
      dev.taskyard.v1.SubmitTaskResponse> getSubmitTaskMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SubmitTask",
      requestType = dev.taskyard.v1.SubmitTaskRequest.class,
      responseType = dev.taskyard.v1.SubmitTaskResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.SubmitTaskRequest,
      dev.taskyard.v1.SubmitTaskResponse> getSubmitTaskMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.SubmitTaskRequest, dev.taskyard.v1.SubmitTaskResponse> getSubmitTaskMethod;
    if ((getSubmitTaskMethod = TaskServiceGrpc.getSubmitTaskMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getSubmitTaskMethod = TaskServiceGrpc.getSubmitTaskMethod) == null) {
          TaskServiceGrpc.getSubmitTaskMethod = getSubmitTaskMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.SubmitTaskRequest, dev.taskyard.v1.SubmitTaskResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SubmitTask"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.SubmitTaskRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.SubmitTaskResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("SubmitTask"))
              .build();
        }
      }
    }
    return getSubmitTaskMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.BatchSubmitTasksRequest,
      dev.taskyard.v1.BatchSubmitTasksResponse> getBatchSubmitTasksMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "BatchSubmitTasks",
      requestType = dev.taskyard.v1.BatchSubmitTasksRequest.class,
      responseType = dev.taskyard.v1.BatchSubmitTasksResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.BatchSubmitTasksRequest,
      dev.taskyard.v1.BatchSubmitTasksResponse> getBatchSubmitTasksMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.BatchSubmitTasksRequest, dev.taskyard.v1.BatchSubmitTasksResponse> getBatchSubmitTasksMethod;
    if ((getBatchSubmitTasksMethod = TaskServiceGrpc.getBatchSubmitTasksMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getBatchSubmitTasksMethod = TaskServiceGrpc.getBatchSubmitTasksMethod) == null) {
          TaskServiceGrpc.getBatchSubmitTasksMethod = getBatchSubmitTasksMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.BatchSubmitTasksRequest, dev.taskyard.v1.BatchSubmitTasksResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "BatchSubmitTasks"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.BatchSubmitTasksRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.BatchSubmitTasksResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("BatchSubmitTasks"))
              .build();
        }
      }
    }
    return getBatchSubmitTasksMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.GetTaskRequest,
      dev.taskyard.v1.GetTaskResponse> getGetTaskMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetTask",
      requestType = dev.taskyard.v1.GetTaskRequest.class,
      responseType = dev.taskyard.v1.GetTaskResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.GetTaskRequest,
      dev.taskyard.v1.GetTaskResponse> getGetTaskMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.GetTaskRequest, dev.taskyard.v1.GetTaskResponse> getGetTaskMethod;
    if ((getGetTaskMethod = TaskServiceGrpc.getGetTaskMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getGetTaskMethod = TaskServiceGrpc.getGetTaskMethod) == null) {
          TaskServiceGrpc.getGetTaskMethod = getGetTaskMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.GetTaskRequest, dev.taskyard.v1.GetTaskResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetTask"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetTaskRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetTaskResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("GetTask"))
              .build();
        }
      }
    }
    return getGetTaskMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.WaitTaskRequest,
      dev.taskyard.v1.WaitTaskResponse> getWaitTaskMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "WaitTask",
      requestType = dev.taskyard.v1.WaitTaskRequest.class,
      responseType = dev.taskyard.v1.WaitTaskResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.WaitTaskRequest,
      dev.taskyard.v1.WaitTaskResponse> getWaitTaskMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.WaitTaskRequest, dev.taskyard.v1.WaitTaskResponse> getWaitTaskMethod;
    if ((getWaitTaskMethod = TaskServiceGrpc.getWaitTaskMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getWaitTaskMethod = TaskServiceGrpc.getWaitTaskMethod) == null) {
          TaskServiceGrpc.getWaitTaskMethod = getWaitTaskMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.WaitTaskRequest, dev.taskyard.v1.WaitTaskResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "WaitTask"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.WaitTaskRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.WaitTaskResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("WaitTask"))
              .build();
        }
      }
    }
    return getWaitTaskMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.RunTaskRequest,
      dev.taskyard.v1.RunTaskResponse> getRunTaskMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RunTask",
      requestType = dev.taskyard.v1.RunTaskRequest.class,
      responseType = dev.taskyard.v1.RunTaskResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.RunTaskRequest,
      dev.taskyard.v1.RunTaskResponse> getRunTaskMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.RunTaskRequest, dev.taskyard.v1.RunTaskResponse> getRunTaskMethod;
    if ((getRunTaskMethod = TaskServiceGrpc.getRunTaskMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getRunTaskMethod = TaskServiceGrpc.getRunTaskMethod) == null) {
          TaskServiceGrpc.getRunTaskMethod = getRunTaskMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.RunTaskRequest, dev.taskyard.v1.RunTaskResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RunTask"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.RunTaskRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.RunTaskResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("RunTask"))
              .build();
        }
      }
    }
    return getRunTaskMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ListTasksRequest,
      dev.taskyard.v1.ListTasksResponse> getListTasksMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListTasks",
      requestType = dev.taskyard.v1.ListTasksRequest.class,
      responseType = dev.taskyard.v1.ListTasksResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ListTasksRequest,
      dev.taskyard.v1.ListTasksResponse> getListTasksMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ListTasksRequest, dev.taskyard.v1.ListTasksResponse> getListTasksMethod;
    if ((getListTasksMethod = TaskServiceGrpc.getListTasksMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getListTasksMethod = TaskServiceGrpc.getListTasksMethod) == null) {
          TaskServiceGrpc.getListTasksMethod = getListTasksMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ListTasksRequest, dev.taskyard.v1.ListTasksResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListTasks"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListTasksRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ListTasksResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("ListTasks"))
              .build();
        }
      }
    }
    return getListTasksMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.CancelTaskRequest,
      dev.taskyard.v1.CancelTaskResponse> getCancelTaskMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CancelTask",
      requestType = dev.taskyard.v1.CancelTaskRequest.class,
      responseType = dev.taskyard.v1.CancelTaskResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.CancelTaskRequest,
      dev.taskyard.v1.CancelTaskResponse> getCancelTaskMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.CancelTaskRequest, dev.taskyard.v1.CancelTaskResponse> getCancelTaskMethod;
    if ((getCancelTaskMethod = TaskServiceGrpc.getCancelTaskMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getCancelTaskMethod = TaskServiceGrpc.getCancelTaskMethod) == null) {
          TaskServiceGrpc.getCancelTaskMethod = getCancelTaskMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.CancelTaskRequest, dev.taskyard.v1.CancelTaskResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CancelTask"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CancelTaskRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.CancelTaskResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("CancelTask"))
              .build();
        }
      }
    }
    return getCancelTaskMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.GetTaskTreeRequest,
      dev.taskyard.v1.GetTaskTreeResponse> getGetTaskTreeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetTaskTree",
      requestType = dev.taskyard.v1.GetTaskTreeRequest.class,
      responseType = dev.taskyard.v1.GetTaskTreeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.GetTaskTreeRequest,
      dev.taskyard.v1.GetTaskTreeResponse> getGetTaskTreeMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.GetTaskTreeRequest, dev.taskyard.v1.GetTaskTreeResponse> getGetTaskTreeMethod;
    if ((getGetTaskTreeMethod = TaskServiceGrpc.getGetTaskTreeMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getGetTaskTreeMethod = TaskServiceGrpc.getGetTaskTreeMethod) == null) {
          TaskServiceGrpc.getGetTaskTreeMethod = getGetTaskTreeMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.GetTaskTreeRequest, dev.taskyard.v1.GetTaskTreeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetTaskTree"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetTaskTreeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetTaskTreeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("GetTaskTree"))
              .build();
        }
      }
    }
    return getGetTaskTreeMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.ExplainTaskRequest,
      dev.taskyard.v1.ExplainTaskResponse> getExplainTaskMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ExplainTask",
      requestType = dev.taskyard.v1.ExplainTaskRequest.class,
      responseType = dev.taskyard.v1.ExplainTaskResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.ExplainTaskRequest,
      dev.taskyard.v1.ExplainTaskResponse> getExplainTaskMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.ExplainTaskRequest, dev.taskyard.v1.ExplainTaskResponse> getExplainTaskMethod;
    if ((getExplainTaskMethod = TaskServiceGrpc.getExplainTaskMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getExplainTaskMethod = TaskServiceGrpc.getExplainTaskMethod) == null) {
          TaskServiceGrpc.getExplainTaskMethod = getExplainTaskMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.ExplainTaskRequest, dev.taskyard.v1.ExplainTaskResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ExplainTask"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ExplainTaskRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.ExplainTaskResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("ExplainTask"))
              .build();
        }
      }
    }
    return getExplainTaskMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.GetTaskLogsRequest,
      dev.taskyard.v1.GetTaskLogsResponse> getGetTaskLogsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetTaskLogs",
      requestType = dev.taskyard.v1.GetTaskLogsRequest.class,
      responseType = dev.taskyard.v1.GetTaskLogsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.GetTaskLogsRequest,
      dev.taskyard.v1.GetTaskLogsResponse> getGetTaskLogsMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.GetTaskLogsRequest, dev.taskyard.v1.GetTaskLogsResponse> getGetTaskLogsMethod;
    if ((getGetTaskLogsMethod = TaskServiceGrpc.getGetTaskLogsMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getGetTaskLogsMethod = TaskServiceGrpc.getGetTaskLogsMethod) == null) {
          TaskServiceGrpc.getGetTaskLogsMethod = getGetTaskLogsMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.GetTaskLogsRequest, dev.taskyard.v1.GetTaskLogsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetTaskLogs"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetTaskLogsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.GetTaskLogsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("GetTaskLogs"))
              .build();
        }
      }
    }
    return getGetTaskLogsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.taskyard.v1.StreamTaskLogsRequest,
      dev.taskyard.v1.StreamTaskLogsResponse> getStreamTaskLogsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "StreamTaskLogs",
      requestType = dev.taskyard.v1.StreamTaskLogsRequest.class,
      responseType = dev.taskyard.v1.StreamTaskLogsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.taskyard.v1.StreamTaskLogsRequest,
      dev.taskyard.v1.StreamTaskLogsResponse> getStreamTaskLogsMethod() {
    io.grpc.MethodDescriptor<dev.taskyard.v1.StreamTaskLogsRequest, dev.taskyard.v1.StreamTaskLogsResponse> getStreamTaskLogsMethod;
    if ((getStreamTaskLogsMethod = TaskServiceGrpc.getStreamTaskLogsMethod) == null) {
      synchronized (TaskServiceGrpc.class) {
        if ((getStreamTaskLogsMethod = TaskServiceGrpc.getStreamTaskLogsMethod) == null) {
          TaskServiceGrpc.getStreamTaskLogsMethod = getStreamTaskLogsMethod =
              io.grpc.MethodDescriptor.<dev.taskyard.v1.StreamTaskLogsRequest, dev.taskyard.v1.StreamTaskLogsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "StreamTaskLogs"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.StreamTaskLogsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.taskyard.v1.StreamTaskLogsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new TaskServiceMethodDescriptorSupplier("StreamTaskLogs"))
              .build();
        }
      }
    }
    return getStreamTaskLogsMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static TaskServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TaskServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TaskServiceStub>() {
        @java.lang.Override
        public TaskServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TaskServiceStub(channel, callOptions);
        }
      };
    return TaskServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static TaskServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TaskServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TaskServiceBlockingV2Stub>() {
        @java.lang.Override
        public TaskServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TaskServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return TaskServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static TaskServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TaskServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TaskServiceBlockingStub>() {
        @java.lang.Override
        public TaskServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TaskServiceBlockingStub(channel, callOptions);
        }
      };
    return TaskServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static TaskServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<TaskServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<TaskServiceFutureStub>() {
        @java.lang.Override
        public TaskServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new TaskServiceFutureStub(channel, callOptions);
        }
      };
    return TaskServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Submit, inspect and cancel tasks.
   * Errors are google.rpc.Status with an ErrorInfo (domain "taskyard.dev") and,
   * for bad input, a BadRequest listing every field violation.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Accept one task. Acceptance is exactly-once per request_id.
     * </pre>
     */
    default void submitTask(dev.taskyard.v1.SubmitTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.SubmitTaskResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSubmitTaskMethod(), responseObserver);
    }

    /**
     * <pre>
     * Accept up to 1,000 tasks in one call: all of them or none.
     * </pre>
     */
    default void batchSubmitTasks(dev.taskyard.v1.BatchSubmitTasksRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.BatchSubmitTasksResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getBatchSubmitTasksMethod(), responseObserver);
    }

    /**
     */
    default void getTask(dev.taskyard.v1.GetTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTaskResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetTaskMethod(), responseObserver);
    }

    /**
     * <pre>
     * Return when the task is final or the wait times out (not an error).
     * </pre>
     */
    default void waitTask(dev.taskyard.v1.WaitTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.WaitTaskResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWaitTaskMethod(), responseObserver);
    }

    /**
     * <pre>
     * Accept one task and wait for its final state, in one call: SubmitTask
     * then WaitTask, with SubmitTask's validation, scope (submit) and errors.
     * Exactly-once per request_id like SubmitTask: a repeated request_id waits
     * on the task the first submission made (created is false). The end of the
     * wait is not an error: the task goes on, and the reply carries its id and
     * current state (final false) for a later WaitTask. The wait ends before
     * the call's own deadline (about 0.1 s before it), never as
     * DEADLINE_EXCEEDED once the task is accepted.
     * </pre>
     */
    default void runTask(dev.taskyard.v1.RunTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.RunTaskResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRunTaskMethod(), responseObserver);
    }

    /**
     */
    default void listTasks(dev.taskyard.v1.ListTasksRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListTasksResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListTasksMethod(), responseObserver);
    }

    /**
     * <pre>
     * Cancel a task. One no pool holds (queued, scheduled, retrying, pending) is
     * CANCELLED at once (NOT_STARTED: its body never runs). A dispatched
     * (assigned) or running one gets the cancel flag; its pool never starts a
     * body whose cancel came first (NOT_STARTED), else stops it in steps (flag,
     * asyncio cancellation, worker kill at the deadline). Unfinished children
     * are cancelled too.
     * </pre>
     */
    default void cancelTask(dev.taskyard.v1.CancelTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CancelTaskResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCancelTaskMethod(), responseObserver);
    }

    /**
     * <pre>
     * A task's whole hierarchy (parents, children, dependencies), from its root.
     * </pre>
     */
    default void getTaskTree(dev.taskyard.v1.GetTaskTreeRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTaskTreeResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetTaskTreeMethod(), responseObserver);
    }

    /**
     * <pre>
     * Why a task is not running yet.
     * </pre>
     */
    default void explainTask(dev.taskyard.v1.ExplainTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ExplainTaskResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getExplainTaskMethod(), responseObserver);
    }

    /**
     * <pre>
     * Page through the lines a task logged.
     * </pre>
     */
    default void getTaskLogs(dev.taskyard.v1.GetTaskLogsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTaskLogsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetTaskLogsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Replay a task's log from an offset, then follow it until the task is final.
     * </pre>
     */
    default void streamTaskLogs(dev.taskyard.v1.StreamTaskLogsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.StreamTaskLogsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getStreamTaskLogsMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service TaskService.
   * <pre>
   * Submit, inspect and cancel tasks.
   * Errors are google.rpc.Status with an ErrorInfo (domain "taskyard.dev") and,
   * for bad input, a BadRequest listing every field violation.
   * </pre>
   */
  public static abstract class TaskServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return TaskServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service TaskService.
   * <pre>
   * Submit, inspect and cancel tasks.
   * Errors are google.rpc.Status with an ErrorInfo (domain "taskyard.dev") and,
   * for bad input, a BadRequest listing every field violation.
   * </pre>
   */
  public static final class TaskServiceStub
      extends io.grpc.stub.AbstractAsyncStub<TaskServiceStub> {
    private TaskServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TaskServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TaskServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Accept one task. Acceptance is exactly-once per request_id.
     * </pre>
     */
    public void submitTask(dev.taskyard.v1.SubmitTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.SubmitTaskResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSubmitTaskMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Accept up to 1,000 tasks in one call: all of them or none.
     * </pre>
     */
    public void batchSubmitTasks(dev.taskyard.v1.BatchSubmitTasksRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.BatchSubmitTasksResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getBatchSubmitTasksMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getTask(dev.taskyard.v1.GetTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTaskResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetTaskMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Return when the task is final or the wait times out (not an error).
     * </pre>
     */
    public void waitTask(dev.taskyard.v1.WaitTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.WaitTaskResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getWaitTaskMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Accept one task and wait for its final state, in one call: SubmitTask
     * then WaitTask, with SubmitTask's validation, scope (submit) and errors.
     * Exactly-once per request_id like SubmitTask: a repeated request_id waits
     * on the task the first submission made (created is false). The end of the
     * wait is not an error: the task goes on, and the reply carries its id and
     * current state (final false) for a later WaitTask. The wait ends before
     * the call's own deadline (about 0.1 s before it), never as
     * DEADLINE_EXCEEDED once the task is accepted.
     * </pre>
     */
    public void runTask(dev.taskyard.v1.RunTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.RunTaskResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRunTaskMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void listTasks(dev.taskyard.v1.ListTasksRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ListTasksResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListTasksMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Cancel a task. One no pool holds (queued, scheduled, retrying, pending) is
     * CANCELLED at once (NOT_STARTED: its body never runs). A dispatched
     * (assigned) or running one gets the cancel flag; its pool never starts a
     * body whose cancel came first (NOT_STARTED), else stops it in steps (flag,
     * asyncio cancellation, worker kill at the deadline). Unfinished children
     * are cancelled too.
     * </pre>
     */
    public void cancelTask(dev.taskyard.v1.CancelTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.CancelTaskResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCancelTaskMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * A task's whole hierarchy (parents, children, dependencies), from its root.
     * </pre>
     */
    public void getTaskTree(dev.taskyard.v1.GetTaskTreeRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTaskTreeResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetTaskTreeMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Why a task is not running yet.
     * </pre>
     */
    public void explainTask(dev.taskyard.v1.ExplainTaskRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.ExplainTaskResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getExplainTaskMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Page through the lines a task logged.
     * </pre>
     */
    public void getTaskLogs(dev.taskyard.v1.GetTaskLogsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTaskLogsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetTaskLogsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Replay a task's log from an offset, then follow it until the task is final.
     * </pre>
     */
    public void streamTaskLogs(dev.taskyard.v1.StreamTaskLogsRequest request,
        io.grpc.stub.StreamObserver<dev.taskyard.v1.StreamTaskLogsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getStreamTaskLogsMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service TaskService.
   * <pre>
   * Submit, inspect and cancel tasks.
   * Errors are google.rpc.Status with an ErrorInfo (domain "taskyard.dev") and,
   * for bad input, a BadRequest listing every field violation.
   * </pre>
   */
  public static final class TaskServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<TaskServiceBlockingV2Stub> {
    private TaskServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TaskServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TaskServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Accept one task. Acceptance is exactly-once per request_id.
     * </pre>
     */
    public dev.taskyard.v1.SubmitTaskResponse submitTask(dev.taskyard.v1.SubmitTaskRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSubmitTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Accept up to 1,000 tasks in one call: all of them or none.
     * </pre>
     */
    public dev.taskyard.v1.BatchSubmitTasksResponse batchSubmitTasks(dev.taskyard.v1.BatchSubmitTasksRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getBatchSubmitTasksMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.GetTaskResponse getTask(dev.taskyard.v1.GetTaskRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Return when the task is final or the wait times out (not an error).
     * </pre>
     */
    public dev.taskyard.v1.WaitTaskResponse waitTask(dev.taskyard.v1.WaitTaskRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getWaitTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Accept one task and wait for its final state, in one call: SubmitTask
     * then WaitTask, with SubmitTask's validation, scope (submit) and errors.
     * Exactly-once per request_id like SubmitTask: a repeated request_id waits
     * on the task the first submission made (created is false). The end of the
     * wait is not an error: the task goes on, and the reply carries its id and
     * current state (final false) for a later WaitTask. The wait ends before
     * the call's own deadline (about 0.1 s before it), never as
     * DEADLINE_EXCEEDED once the task is accepted.
     * </pre>
     */
    public dev.taskyard.v1.RunTaskResponse runTask(dev.taskyard.v1.RunTaskRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRunTaskMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ListTasksResponse listTasks(dev.taskyard.v1.ListTasksRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListTasksMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Cancel a task. One no pool holds (queued, scheduled, retrying, pending) is
     * CANCELLED at once (NOT_STARTED: its body never runs). A dispatched
     * (assigned) or running one gets the cancel flag; its pool never starts a
     * body whose cancel came first (NOT_STARTED), else stops it in steps (flag,
     * asyncio cancellation, worker kill at the deadline). Unfinished children
     * are cancelled too.
     * </pre>
     */
    public dev.taskyard.v1.CancelTaskResponse cancelTask(dev.taskyard.v1.CancelTaskRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCancelTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * A task's whole hierarchy (parents, children, dependencies), from its root.
     * </pre>
     */
    public dev.taskyard.v1.GetTaskTreeResponse getTaskTree(dev.taskyard.v1.GetTaskTreeRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetTaskTreeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Why a task is not running yet.
     * </pre>
     */
    public dev.taskyard.v1.ExplainTaskResponse explainTask(dev.taskyard.v1.ExplainTaskRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getExplainTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Page through the lines a task logged.
     * </pre>
     */
    public dev.taskyard.v1.GetTaskLogsResponse getTaskLogs(dev.taskyard.v1.GetTaskLogsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetTaskLogsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Replay a task's log from an offset, then follow it until the task is final.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.taskyard.v1.StreamTaskLogsResponse>
        streamTaskLogs(dev.taskyard.v1.StreamTaskLogsRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getStreamTaskLogsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service TaskService.
   * <pre>
   * Submit, inspect and cancel tasks.
   * Errors are google.rpc.Status with an ErrorInfo (domain "taskyard.dev") and,
   * for bad input, a BadRequest listing every field violation.
   * </pre>
   */
  public static final class TaskServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<TaskServiceBlockingStub> {
    private TaskServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TaskServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TaskServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Accept one task. Acceptance is exactly-once per request_id.
     * </pre>
     */
    public dev.taskyard.v1.SubmitTaskResponse submitTask(dev.taskyard.v1.SubmitTaskRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSubmitTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Accept up to 1,000 tasks in one call: all of them or none.
     * </pre>
     */
    public dev.taskyard.v1.BatchSubmitTasksResponse batchSubmitTasks(dev.taskyard.v1.BatchSubmitTasksRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getBatchSubmitTasksMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.GetTaskResponse getTask(dev.taskyard.v1.GetTaskRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Return when the task is final or the wait times out (not an error).
     * </pre>
     */
    public dev.taskyard.v1.WaitTaskResponse waitTask(dev.taskyard.v1.WaitTaskRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getWaitTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Accept one task and wait for its final state, in one call: SubmitTask
     * then WaitTask, with SubmitTask's validation, scope (submit) and errors.
     * Exactly-once per request_id like SubmitTask: a repeated request_id waits
     * on the task the first submission made (created is false). The end of the
     * wait is not an error: the task goes on, and the reply carries its id and
     * current state (final false) for a later WaitTask. The wait ends before
     * the call's own deadline (about 0.1 s before it), never as
     * DEADLINE_EXCEEDED once the task is accepted.
     * </pre>
     */
    public dev.taskyard.v1.RunTaskResponse runTask(dev.taskyard.v1.RunTaskRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRunTaskMethod(), getCallOptions(), request);
    }

    /**
     */
    public dev.taskyard.v1.ListTasksResponse listTasks(dev.taskyard.v1.ListTasksRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListTasksMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Cancel a task. One no pool holds (queued, scheduled, retrying, pending) is
     * CANCELLED at once (NOT_STARTED: its body never runs). A dispatched
     * (assigned) or running one gets the cancel flag; its pool never starts a
     * body whose cancel came first (NOT_STARTED), else stops it in steps (flag,
     * asyncio cancellation, worker kill at the deadline). Unfinished children
     * are cancelled too.
     * </pre>
     */
    public dev.taskyard.v1.CancelTaskResponse cancelTask(dev.taskyard.v1.CancelTaskRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCancelTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * A task's whole hierarchy (parents, children, dependencies), from its root.
     * </pre>
     */
    public dev.taskyard.v1.GetTaskTreeResponse getTaskTree(dev.taskyard.v1.GetTaskTreeRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetTaskTreeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Why a task is not running yet.
     * </pre>
     */
    public dev.taskyard.v1.ExplainTaskResponse explainTask(dev.taskyard.v1.ExplainTaskRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getExplainTaskMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Page through the lines a task logged.
     * </pre>
     */
    public dev.taskyard.v1.GetTaskLogsResponse getTaskLogs(dev.taskyard.v1.GetTaskLogsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetTaskLogsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Replay a task's log from an offset, then follow it until the task is final.
     * </pre>
     */
    public java.util.Iterator<dev.taskyard.v1.StreamTaskLogsResponse> streamTaskLogs(
        dev.taskyard.v1.StreamTaskLogsRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getStreamTaskLogsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service TaskService.
   * <pre>
   * Submit, inspect and cancel tasks.
   * Errors are google.rpc.Status with an ErrorInfo (domain "taskyard.dev") and,
   * for bad input, a BadRequest listing every field violation.
   * </pre>
   */
  public static final class TaskServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<TaskServiceFutureStub> {
    private TaskServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected TaskServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new TaskServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Accept one task. Acceptance is exactly-once per request_id.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.SubmitTaskResponse> submitTask(
        dev.taskyard.v1.SubmitTaskRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSubmitTaskMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Accept up to 1,000 tasks in one call: all of them or none.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.BatchSubmitTasksResponse> batchSubmitTasks(
        dev.taskyard.v1.BatchSubmitTasksRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getBatchSubmitTasksMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.GetTaskResponse> getTask(
        dev.taskyard.v1.GetTaskRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetTaskMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Return when the task is final or the wait times out (not an error).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.WaitTaskResponse> waitTask(
        dev.taskyard.v1.WaitTaskRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getWaitTaskMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Accept one task and wait for its final state, in one call: SubmitTask
     * then WaitTask, with SubmitTask's validation, scope (submit) and errors.
     * Exactly-once per request_id like SubmitTask: a repeated request_id waits
     * on the task the first submission made (created is false). The end of the
     * wait is not an error: the task goes on, and the reply carries its id and
     * current state (final false) for a later WaitTask. The wait ends before
     * the call's own deadline (about 0.1 s before it), never as
     * DEADLINE_EXCEEDED once the task is accepted.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.RunTaskResponse> runTask(
        dev.taskyard.v1.RunTaskRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRunTaskMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ListTasksResponse> listTasks(
        dev.taskyard.v1.ListTasksRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListTasksMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Cancel a task. One no pool holds (queued, scheduled, retrying, pending) is
     * CANCELLED at once (NOT_STARTED: its body never runs). A dispatched
     * (assigned) or running one gets the cancel flag; its pool never starts a
     * body whose cancel came first (NOT_STARTED), else stops it in steps (flag,
     * asyncio cancellation, worker kill at the deadline). Unfinished children
     * are cancelled too.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.CancelTaskResponse> cancelTask(
        dev.taskyard.v1.CancelTaskRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCancelTaskMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * A task's whole hierarchy (parents, children, dependencies), from its root.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.GetTaskTreeResponse> getTaskTree(
        dev.taskyard.v1.GetTaskTreeRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetTaskTreeMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Why a task is not running yet.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.ExplainTaskResponse> explainTask(
        dev.taskyard.v1.ExplainTaskRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getExplainTaskMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Page through the lines a task logged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.taskyard.v1.GetTaskLogsResponse> getTaskLogs(
        dev.taskyard.v1.GetTaskLogsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetTaskLogsMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SUBMIT_TASK = 0;
  private static final int METHODID_BATCH_SUBMIT_TASKS = 1;
  private static final int METHODID_GET_TASK = 2;
  private static final int METHODID_WAIT_TASK = 3;
  private static final int METHODID_RUN_TASK = 4;
  private static final int METHODID_LIST_TASKS = 5;
  private static final int METHODID_CANCEL_TASK = 6;
  private static final int METHODID_GET_TASK_TREE = 7;
  private static final int METHODID_EXPLAIN_TASK = 8;
  private static final int METHODID_GET_TASK_LOGS = 9;
  private static final int METHODID_STREAM_TASK_LOGS = 10;

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
        case METHODID_SUBMIT_TASK:
          serviceImpl.submitTask((dev.taskyard.v1.SubmitTaskRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.SubmitTaskResponse>) responseObserver);
          break;
        case METHODID_BATCH_SUBMIT_TASKS:
          serviceImpl.batchSubmitTasks((dev.taskyard.v1.BatchSubmitTasksRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.BatchSubmitTasksResponse>) responseObserver);
          break;
        case METHODID_GET_TASK:
          serviceImpl.getTask((dev.taskyard.v1.GetTaskRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTaskResponse>) responseObserver);
          break;
        case METHODID_WAIT_TASK:
          serviceImpl.waitTask((dev.taskyard.v1.WaitTaskRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.WaitTaskResponse>) responseObserver);
          break;
        case METHODID_RUN_TASK:
          serviceImpl.runTask((dev.taskyard.v1.RunTaskRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.RunTaskResponse>) responseObserver);
          break;
        case METHODID_LIST_TASKS:
          serviceImpl.listTasks((dev.taskyard.v1.ListTasksRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ListTasksResponse>) responseObserver);
          break;
        case METHODID_CANCEL_TASK:
          serviceImpl.cancelTask((dev.taskyard.v1.CancelTaskRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.CancelTaskResponse>) responseObserver);
          break;
        case METHODID_GET_TASK_TREE:
          serviceImpl.getTaskTree((dev.taskyard.v1.GetTaskTreeRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTaskTreeResponse>) responseObserver);
          break;
        case METHODID_EXPLAIN_TASK:
          serviceImpl.explainTask((dev.taskyard.v1.ExplainTaskRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.ExplainTaskResponse>) responseObserver);
          break;
        case METHODID_GET_TASK_LOGS:
          serviceImpl.getTaskLogs((dev.taskyard.v1.GetTaskLogsRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.GetTaskLogsResponse>) responseObserver);
          break;
        case METHODID_STREAM_TASK_LOGS:
          serviceImpl.streamTaskLogs((dev.taskyard.v1.StreamTaskLogsRequest) request,
              (io.grpc.stub.StreamObserver<dev.taskyard.v1.StreamTaskLogsResponse>) responseObserver);
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
          getSubmitTaskMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.SubmitTaskRequest,
              dev.taskyard.v1.SubmitTaskResponse>(
                service, METHODID_SUBMIT_TASK)))
        .addMethod(
          getBatchSubmitTasksMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.BatchSubmitTasksRequest,
              dev.taskyard.v1.BatchSubmitTasksResponse>(
                service, METHODID_BATCH_SUBMIT_TASKS)))
        .addMethod(
          getGetTaskMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.GetTaskRequest,
              dev.taskyard.v1.GetTaskResponse>(
                service, METHODID_GET_TASK)))
        .addMethod(
          getWaitTaskMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.WaitTaskRequest,
              dev.taskyard.v1.WaitTaskResponse>(
                service, METHODID_WAIT_TASK)))
        .addMethod(
          getRunTaskMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.RunTaskRequest,
              dev.taskyard.v1.RunTaskResponse>(
                service, METHODID_RUN_TASK)))
        .addMethod(
          getListTasksMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ListTasksRequest,
              dev.taskyard.v1.ListTasksResponse>(
                service, METHODID_LIST_TASKS)))
        .addMethod(
          getCancelTaskMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.CancelTaskRequest,
              dev.taskyard.v1.CancelTaskResponse>(
                service, METHODID_CANCEL_TASK)))
        .addMethod(
          getGetTaskTreeMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.GetTaskTreeRequest,
              dev.taskyard.v1.GetTaskTreeResponse>(
                service, METHODID_GET_TASK_TREE)))
        .addMethod(
          getExplainTaskMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.ExplainTaskRequest,
              dev.taskyard.v1.ExplainTaskResponse>(
                service, METHODID_EXPLAIN_TASK)))
        .addMethod(
          getGetTaskLogsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.taskyard.v1.GetTaskLogsRequest,
              dev.taskyard.v1.GetTaskLogsResponse>(
                service, METHODID_GET_TASK_LOGS)))
        .addMethod(
          getStreamTaskLogsMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.taskyard.v1.StreamTaskLogsRequest,
              dev.taskyard.v1.StreamTaskLogsResponse>(
                service, METHODID_STREAM_TASK_LOGS)))
        .build();
  }

  private static abstract class TaskServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    TaskServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.taskyard.v1.TaskServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("TaskService");
    }
  }

  private static final class TaskServiceFileDescriptorSupplier
      extends TaskServiceBaseDescriptorSupplier {
    TaskServiceFileDescriptorSupplier() {}
  }

  private static final class TaskServiceMethodDescriptorSupplier
      extends TaskServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    TaskServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (TaskServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new TaskServiceFileDescriptorSupplier())
              .addMethod(getSubmitTaskMethod())
              .addMethod(getBatchSubmitTasksMethod())
              .addMethod(getGetTaskMethod())
              .addMethod(getWaitTaskMethod())
              .addMethod(getRunTaskMethod())
              .addMethod(getListTasksMethod())
              .addMethod(getCancelTaskMethod())
              .addMethod(getGetTaskTreeMethod())
              .addMethod(getExplainTaskMethod())
              .addMethod(getGetTaskLogsMethod())
              .addMethod(getStreamTaskLogsMethod())
              .build();
        }
      }
    }
    return result;
  }
}
