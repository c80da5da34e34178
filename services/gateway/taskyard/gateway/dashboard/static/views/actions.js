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
      page.notify(typeof done === "function" ? done(result) : done || `${label}: done`, "ok");
      if (after) after(result);
    } catch (err) {
      page.fail(err);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

export function pauseQueue(queue) {
  return call("QueueService", "PauseQueue", { queue });
}

export function resumeQueue(queue) {
  return call("QueueService", "ResumeQueue", { queue });
}

export function retryTasks(filter) {
  return call("QueueService", "RetryTasks", filter);
}

export function cancelTask(id, reason = "cancelled from the dashboard") {
  return call("TaskService", "CancelTask", { id, reason, wait: "10s" });
}
