// Buttons that change things: each reports the gateway's answer (a refusal
// included) in the page's notice line, and re-enables itself when done.

import { call } from "../api.js";
import { h } from "../dom.js";

export function actionButton(label, page, run, { done, after, confirmText, ...attrs } = {}) {
  const button = h("button", { type: "button", ...attrs }, label);
  button.addEventListener("click", async () => {
    if (confirmText && !window.confirm(confirmText)) return;
    button.disabled = true;
    try {
      const result = await run();
      // A string is a success; { text, kind } an answer that changed nothing.
      const said = typeof done === "function" ? done(result) : done || `${label}: done`;
      if (typeof said === "string") page.notify(said, "ok");
      else page.notify(said.text, said.kind);
      if (after) after(result);
    } catch (err) {
      page.fail(err);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

// ``tenant``: the queue's, when an operator's view of every tenant shows another tenant's.
export function pauseQueue(queue, tenant = undefined) {
  return call("QueueService", "PauseQueue", { queue }, tenant || undefined);
}

export function resumeQueue(queue, tenant = undefined) {
  return call("QueueService", "ResumeQueue", { queue }, tenant || undefined);
}

export function retryTasks(filter, tenant = undefined) {
  return call("QueueService", "RetryTasks", filter, tenant || undefined);
}

// RetryTasks' answer: the ids it retried. It retries FAILURE tasks only (SUCCESS and
// CANCELLED never run again), so an empty answer is said, with ``nothing`` as why.
export function retried(reply, nothing, of = "") {
  const n = (reply.ids || []).length;
  return n ? `${n} task(s)${of} retried` : { text: `not retried: ${nothing}`, kind: "warn" };
}

export function cancelTask(id, reason = "cancelled from the dashboard") {
  return call("TaskService", "CancelTask", { id, reason, wait: "10s" });
}
