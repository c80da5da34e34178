// Server-sent events read with fetch() and a ReadableStream: EventSource cannot
// send an Authorization header. A dropped connection is opened again with
// Last-Event-ID, so the server resumes right after the last message received.

import { headers, scoped } from "./api.js";

const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 10000;
// Errors that another try would only repeat.
const FINAL_CODES = new Set(["UNAUTHENTICATED", "PERMISSION_DENIED", "INVALID_ARGUMENT",
  "NOT_FOUND", "UNIMPLEMENTED"]);

function parse(block) {
  const message = { event: "message", data: "", id: null };
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") message.event = value;
    else if (field === "data") message.data += (message.data ? "\n" : "") + value;
    else if (field === "id") message.id = value;
  }
  return message;
}

// open(url, {onMessage(event, data, id), onState(text), onError(body), onEnd()}) -> {close()}
export function open(url, handlers) {
  const controller = new AbortController();
  let lastId = null;
  let delay = RETRY_FIRST_MS;
  let closed = false;
  const state = (text) => handlers.onState && handlers.onState(text);

  async function readOnce() {
    const extra = { Accept: "text/event-stream" };
    if (lastId) extra["Last-Event-ID"] = lastId;
    const reply = await fetch(scoped(url), { headers: headers(extra), signal: controller.signal });
    if (!reply.ok) {
      const body = await reply.json().catch(() => ({ code: `HTTP_${reply.status}` }));
      return { error: body };
    }
    state("live");
    delay = RETRY_FIRST_MS;
    const reader = reply.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return {};
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const message = parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (message.id !== null) lastId = message.id;
        const data = message.data ? JSON.parse(message.data) : {};
        if (message.event === "error") return { error: data };
        if (message.event === "end") return { end: true };
        if (message.event !== "message") handlers.onMessage(message.event, data, message.id);
      }
    }
  }

  async function loop() {
    while (!closed) {
      let outcome;
      try {
        outcome = await readOnce();
      } catch (err) {
        if (closed) return;
        outcome = {};
      }
      if (closed) return;
      if (outcome.end) {
        state("ended");
        if (handlers.onEnd) handlers.onEnd();
        return;
      }
      if (outcome.error) {
        if (outcome.error.reason === "CURSOR_EXPIRED") lastId = null;
        else if (FINAL_CODES.has(outcome.error.code)) {
          state("stopped");
          if (handlers.onError) handlers.onError(outcome.error);
          return;
        }
      }
      state("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }

  state("connecting");
  loop();
  return {
    close() {
      closed = true;
      controller.abort();
    },
  };
}
