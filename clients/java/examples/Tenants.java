// Makes a tenant with an operator's token, runs add(2, 3) as that tenant and reads the tenant
// back: the README's Tenants section, run.
//   clients/java/run examples/Tenants.java acme
// TASKYARD_TARGET (default localhost:50051) and TASKYARD_TOKEN (an operator's: no tenant= in
// the gateway's tokens file); a loopback target is reached in plaintext.

import dev.taskyard.client.RateLimit;
import dev.taskyard.client.TaskInfo;
import dev.taskyard.client.TaskState;
import dev.taskyard.client.TaskyardClient;
import dev.taskyard.client.TaskyardClientBuilder;
import dev.taskyard.client.TenantInfo;
import dev.taskyard.client.TenantSpec;
import dev.taskyard.client.WaitResult;
import java.time.Duration;

public class Tenants {
  public static void main(String[] args) {
    if (args.length != 1) {
      System.err.println("usage: Tenants NAME");
      System.exit(2);
    }
    String target = System.getenv().getOrDefault("TASKYARD_TARGET", "localhost:50051");
    TaskyardClientBuilder builder = TaskyardClient.builder(target).token(System.getenv("TASKYARD_TOKEN"));
    String host = target.substring(0, Math.max(0, target.lastIndexOf(':')));
    if (host.equals("localhost") || host.startsWith("127.") || host.equals("[::1]")) {
      builder.plaintext();
    }
    try (TaskyardClient client = builder.build()) {
      tenant(client, builder, args[0]);
    }
  }

  // client: an operator's token's, built by builder.
  static void tenant(TaskyardClient client, TaskyardClientBuilder builder, String name) {
    client.tenants().create(TenantSpec.builder(name)
        .maxConcurrency(50).rate(new RateLimit(100, Duration.ofSeconds(1), 0)).weight(2).build());
    client.tenants().stream(100).forEach(t -> System.out.println("listed " + t.name() + " " + t.state()));
    // While suspended, its submissions fail FAILED_PRECONDITION, reason TENANT_SUSPENDED.
    TenantInfo suspended = client.tenants().suspend(name, "invoice overdue");
    System.out.println("suspended " + suspended.name() + " " + suspended.state());
    TenantInfo resumed = client.tenants().resume(name);
    System.out.println("resumed " + resumed.name() + " " + resumed.state());

    // The operator's token acting as the tenant: every call is the tenant's.
    try (TaskyardClient as = builder.tenant(name).build()) {
      WaitResult done = as.await(as.submit("add", 2, 3).task().id(), Duration.ofSeconds(30));
      TaskInfo task = done.task();
      if (task.state() != TaskState.SUCCESS) {
        throw new IllegalStateException("add ended " + task.state() + (done.timedOut() ? " (wait timed out)" : ""));
      }
      System.out.println("add(2, 3) -> " + task.result() + " as " + task.tenant());
    }

    TenantInfo got = client.tenants().get(name);
    System.out.println("got " + got.name() + " " + got.state() + " max concurrency " + got.maxConcurrency()
        + " weight " + got.weight());
  }
}
