// The package's own exports map, resolved by name from inside it (Node's self-reference),
// as require() and import see it: the CommonJS build must load without require(esm).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

function node(...args) {
  return JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: "utf8" }));
}

test("require() loads the CommonJS build, services and generated modules included", () => {
  const out = node(
    "--no-experimental-require-module",
    "-e",
    `const m = require("@taskyard/client");
     const gen = require("@taskyard/client/gen/taskyard/v1/queue_service_pb");
     console.log(JSON.stringify({
       file: require.resolve("@taskyard/client"),
       names: [m.QueueService, m.ScheduleService, m.EventService].map((s) => s.typeName),
       same: gen.QueueService === m.QueueService,
       functions: [typeof m.TaskyardClient, typeof m.createTaskyardTransport, typeof m.createClient],
     }));`,
  );
  assert.match(out.file, /dist[\\/]cjs[\\/]index\.js$/);
  assert.deepEqual(out.names, ["taskyard.v1.QueueService", "taskyard.v1.ScheduleService", "taskyard.v1.EventService"]);
  assert.equal(out.same, true);
  assert.deepEqual(out.functions, ["function", "function", "function"]);
});

test("import loads the ES modules", () => {
  const out = node(
    "--input-type=module",
    "-e",
    `import { EventService, createTaskyardTransport } from "@taskyard/client";
     import { EventKind } from "@taskyard/client/gen/taskyard/v1/event_service_pb";
     console.log(JSON.stringify({
       file: import.meta.resolve("@taskyard/client"),
       name: EventService.typeName,
       kinds: typeof EventKind,
       transport: typeof createTaskyardTransport,
     }));`,
  );
  assert.match(out.file, /\/dist\/index\.js$/);
  assert.deepEqual([out.name, out.kinds, out.transport], ["taskyard.v1.EventService", "object", "function"]);
});
