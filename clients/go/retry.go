package taskyard

// serviceConfig retries UNAVAILABLE (the gateway restarting, a connection
// lost before the call was read) a few times with backoff. gRPC resends the
// same request bytes, so a retried Submit keeps its request_id and cannot
// create a second task.
const serviceConfig = `{
  "methodConfig": [{
    "name": [{"service": "taskyard.v1.TaskService"}],
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "0.2s",
      "maxBackoff": "2s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`
