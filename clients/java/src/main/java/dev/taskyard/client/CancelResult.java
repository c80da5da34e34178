package dev.taskyard.client;

import java.util.List;

/**
 * The outcome of a cancel.
 *
 * @param task the task after the cancel
 * @param cancelled true when it is CANCELLED; false when only the cancel flag of a task already
 *     handed to a pool (ASSIGNED or RUNNING) is set so far: its pool never starts a body whose
 *     cancel came first (cancel with a wait to wait for it to stop)
 * @param step the step that stopped it, once stopped
 * @param cancelledChildren the ids of its unfinished children, cancelled with it
 */
public record CancelResult(TaskInfo task, boolean cancelled, CancelStep step, List<String> cancelledChildren) {
  public CancelResult {
    cancelledChildren = List.copyOf(cancelledChildren);
  }
}
