// Submits add(2, 3), waits for it and prints the result: 5.
//   clients/java/run examples/Add.java
// TASKYARD_TARGET (default localhost:50051) and TASKYARD_TOKEN choose the gateway; a loopback
// one is reached in plaintext (taskyard dev), any other with TLS and the system's CAs.

import dev.taskyard.client.Submission;
import dev.taskyard.client.TaskState;
import dev.taskyard.client.TaskyardClient;
import dev.taskyard.client.TaskyardClientBuilder;
import dev.taskyard.client.WaitResult;
import java.time.Duration;

public class Add {
  public static void main(String[] args) {
    String target = System.getenv().getOrDefault("TASKYARD_TARGET", "localhost:50051");
    TaskyardClientBuilder builder = TaskyardClient.builder(target).token(System.getenv("TASKYARD_TOKEN"));
    String host = target.substring(0, Math.max(0, target.lastIndexOf(':')));
    if (host.equals("localhost") || host.startsWith("127.") || host.equals("[::1]")) {
      builder.plaintext();
    }
    try (TaskyardClient client = builder.build()) {
      Submission submitted = client.submit("add", 2, 3);
      WaitResult done = client.await(submitted.task().id(), Duration.ofSeconds(30));
      if (done.task().state() != TaskState.SUCCESS) {
        System.err.println("add(2, 3) ended " + done.task().state() + (done.timedOut() ? " (wait timed out)" : ""));
        System.exit(1);
      }
      System.out.println(done.task().result());
    }
  }
}
