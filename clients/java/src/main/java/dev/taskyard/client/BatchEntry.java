package dev.taskyard.client;

/**
 * The outcome of one task of a batch, in request order.
 *
 * @param id the task's id
 * @param state its state at acceptance
 * @param created false when its request id matched an earlier submission
 */
public record BatchEntry(String id, TaskState state, boolean created) {}
