package dev.taskyard.client;

/**
 * The outcome of a submit.
 *
 * @param task the task as accepted
 * @param created false when the request id matched an earlier submission: {@code task} is that one
 */
public record Submission(TaskInfo task, boolean created) {}
