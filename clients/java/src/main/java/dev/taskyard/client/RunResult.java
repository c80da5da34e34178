package dev.taskyard.client;

/**
 * The outcome of a run (submit and wait in one call): the task once final, or as it was when the
 * wait ran out.
 *
 * @param task the task
 * @param created false when the request id matched an earlier submission: {@code task} is that one
 * @param timedOut true when the wait ended before the task was final (not an error: the task goes
 *     on, {@link TaskyardClient#await(String, Duration)} it later)
 */
public record RunResult(TaskInfo task, boolean created, boolean timedOut) {}
