package dev.taskyard.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A failed call: the gRPC status code and message, and the details the gateway attached.
 *
 * <p>The gateway's refusals carry a {@code google.rpc.ErrorInfo} (domain {@code taskyard.dev}):
 * branch on {@link #reason()}, e.g. {@code TASK_NOT_FOUND}, {@code UNKNOWN_TASK_NAME}, {@code
 * TOKEN_MISSING}. Bad input also lists every bad field in {@link #violations()}. A refusal by gRPC
 * itself (an unreachable gateway, a deadline, a message over the size limit) has only a code:
 * {@link #reason()} is empty and there are no violations.
 *
 * <p>A task that fails is not a failed call: it is a task in state {@link TaskState#FAILURE}.
 */
public final class TaskyardException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status.Code code;
  private final String description;
  private final String reason;
  private final String domain;
  private final Map<String, String> metadata;
  private final List<FieldViolation> violations;

  /** An exception with these parts; the client makes them from gRPC errors. */
  public TaskyardException(
      Status.Code code,
      String description,
      String reason,
      String domain,
      Map<String, String> metadata,
      List<FieldViolation> violations,
      Throwable cause) {
    super(code + (description.isEmpty() ? "" : ": " + description), cause);
    this.code = code;
    this.description = description;
    this.reason = reason;
    this.domain = domain;
    this.metadata = Map.copyOf(metadata);
    this.violations = List.copyOf(violations);
  }

  /** The exception for a failed gRPC call, with its status details decoded. */
  public static TaskyardException fromGrpc(StatusRuntimeException e) {
    Status status = e.getStatus();
    String description = status.getDescription() == null ? "" : status.getDescription();
    String reason = "";
    String domain = "";
    Map<String, String> metadata = Map.of();
    List<FieldViolation> violations = new ArrayList<>();
    com.google.rpc.Status details = StatusProto.fromThrowable(e);
    if (details != null) {
      for (Any any : details.getDetailsList()) {
        try {
          if (any.is(ErrorInfo.class)) {
            ErrorInfo info = any.unpack(ErrorInfo.class);
            reason = info.getReason();
            domain = info.getDomain();
            metadata = info.getMetadataMap();
          } else if (any.is(BadRequest.class)) {
            for (BadRequest.FieldViolation v : any.unpack(BadRequest.class).getFieldViolationsList()) {
              violations.add(new FieldViolation(v.getField(), v.getDescription(), v.getReason()));
            }
          }
        } catch (InvalidProtocolBufferException ignored) {
          // A detail that does not decode adds nothing; the code and message still stand.
        }
      }
    }
    return new TaskyardException(status.getCode(), description, reason, domain, metadata, violations, e);
  }

  /** The gRPC status code, e.g. {@code NOT_FOUND}. */
  public Status.Code code() {
    return code;
  }

  /** The status message alone (without the code that {@link #getMessage()} starts with). */
  public String description() {
    return description;
  }

  /** The {@code ErrorInfo} reason, e.g. {@code TASK_NOT_FOUND}; empty when there is none. */
  public String reason() {
    return reason;
  }

  /** The {@code ErrorInfo} domain, {@code taskyard.dev} for the gateway's; empty when none. */
  public String domain() {
    return domain;
  }

  /** The {@code ErrorInfo} metadata, e.g. {@code field=task.name}; empty when none. */
  public Map<String, String> metadata() {
    return metadata;
  }

  /** Every bad field of the request, in the server's order; empty when none. */
  public List<FieldViolation> violations() {
    return violations;
  }
}
