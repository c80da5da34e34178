package dev.taskyard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TaskyardExceptionTest {
  @Test
  void decodesErrorInfoAndViolations() {
    com.google.rpc.Status status = com.google.rpc.Status.newBuilder()
        .setCode(Code.INVALID_ARGUMENT_VALUE)
        .setMessage("task.name: must not be empty")
        .addDetails(Any.pack(ErrorInfo.newBuilder()
            .setReason("INVALID_ARGUMENT")
            .setDomain("taskyard.dev")
            .putMetadata("field", "task.name")
            .build()))
        .addDetails(Any.pack(BadRequest.newBuilder()
            .addFieldViolations(BadRequest.FieldViolation.newBuilder()
                .setField("task.name")
                .setDescription("must not be empty")
                .setReason("INVALID_ARGUMENT"))
            .build()))
        .build();

    TaskyardException e = TaskyardException.fromGrpc(StatusProto.toStatusRuntimeException(status));

    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals("task.name: must not be empty", e.description());
    assertEquals("INVALID_ARGUMENT: task.name: must not be empty", e.getMessage());
    assertEquals("INVALID_ARGUMENT", e.reason());
    assertEquals("taskyard.dev", e.domain());
    assertEquals(Map.of("field", "task.name"), e.metadata());
    assertEquals(List.of(new FieldViolation("task.name", "must not be empty", "INVALID_ARGUMENT")), e.violations());
  }

  @Test
  void refusalOfGrpcItselfHasNoDetails() {
    TaskyardException e =
        TaskyardException.fromGrpc(Status.UNAVAILABLE.withDescription("connection refused").asRuntimeException());

    assertEquals(Status.Code.UNAVAILABLE, e.code());
    assertEquals("", e.reason());
    assertEquals("", e.domain());
    assertTrue(e.metadata().isEmpty());
    assertTrue(e.violations().isEmpty());
  }
}
