"""The Taskyard gateway: the public gRPC API (``taskyard.v1.TaskService``), health and reflection."""
