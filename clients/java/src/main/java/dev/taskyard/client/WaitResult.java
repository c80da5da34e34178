package dev.taskyard.client;

/**
 * The outcome of a wait: the task once final, or as it was when the wait ran out.
 *
 * @param task the task
 * @param timedOut true when the wait ended before the task was final (not an error)
 */
public record WaitResult(TaskInfo task, boolean timedOut) {}
