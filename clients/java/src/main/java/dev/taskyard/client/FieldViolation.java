package dev.taskyard.client;

/**
 * One bad field of a refused request (a {@code google.rpc.BadRequest} field violation).
 *
 * @param field the field's path, e.g. {@code task.name} or {@code tasks[1].args[0]}
 * @param description what is wrong with it, for people
 * @param reason a stable code, e.g. {@code UNKNOWN_TASK_NAME}; empty when the server gave none
 */
public record FieldViolation(String field, String description, String reason) {}
