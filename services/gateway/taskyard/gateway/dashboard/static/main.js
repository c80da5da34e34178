// The page's frame: the router (#/overview, #/tasks, #/tasks/ID, #/schedules, #/limits,
// #/failures, #/failures/GROUP, #/redrives/ID),
// the token form (shown only when the gateway asks for tokens), the tenant picker
// (an operator's: shown when ListTenants answers), the live indicator
// and the notice line every view reports to.

import { call, config, setTenant, setToken, tenant, token } from "./api.js";
import { replace } from "./dom.js";
import * as failures from "./views/failures.js";
import * as limits from "./views/limits.js";
import * as overview from "./views/overview.js";
import * as redrives from "./views/redrives.js";
import * as schedules from "./views/schedules.js";
import * as task from "./views/task.js";
import * as tasks from "./views/tasks.js";

const main = document.getElementById("main");
const notice = document.getElementById("notice");
const live = document.getElementById("live");
let cleanup = null;

export const page = {
  notify(text, kind = "error") {
    notice.hidden = !text;
    notice.className = `notice ${kind}`;
    notice.textContent = text || "";
  },
  // An API error as one line: its gRPC code, then what the gateway said.
  fail(err) {
    const text = `${err.code || "ERROR"}: ${err.message}`;
    page.notify(text);
    if (err.code === "UNAUTHENTICATED") document.getElementById("token").focus();
    return text;
  },
  live(text) {
    live.textContent = text;
    live.dataset.state = text;
  },
};

async function route() {
  const hash = location.hash.replace(/^#\/?/, "") || "overview";
  const [path, query = ""] = hash.split("?");
  const parts = path.split("/").map(decodeURIComponent);
  const params = new URLSearchParams(query);
  if (cleanup) cleanup();
  cleanup = null;
  page.notify("");
  replace(main);
  let view = overview;
  let arg = params;
  if (parts[0] === "tasks" && parts[1]) [view, arg] = [task, parts[1]];
  else if (parts[0] === "tasks") view = tasks;
  else if (parts[0] === "schedules") view = schedules;
  else if (parts[0] === "limits") view = limits;
  else if (parts[0] === "failures" && parts[1]) {
    [view, arg] = [{ render: (m, id, p) => failures.renderGroup(m, id, p, params) }, parts[1]];
  } else if (parts[0] === "failures") view = failures;
  else if (parts[0] === "redrives" && parts[1]) {
    [view, arg] = [{ render: (m, id, p) => redrives.render(m, id, p, params) }, parts[1]];
  }
  const current = view === task ? "tasks" : parts[0] === "redrives" ? "failures" : parts[0] || "overview";
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.page === current) {
      link.setAttribute("aria-current", "page");
    } else link.removeAttribute("aria-current");
  }
  const { auth } = await config().catch(() => ({ auth: false }));
  document.getElementById("token-form").hidden = !auth;
  if (auth && !token()) {
    // Every call would be refused: ask for the token first.
    page.notify("This gateway needs a bearer token: type it in the Token field (it stays in this tab only).");
    document.getElementById("token").focus();
    return;
  }
  pickTenants();  // beside the view: the picker fills in when ListTenants answers
  cleanup = view.render(main, arg, page) || null;
}

// The picker lists the tenants for an operator's token; a tenant's token is
// refused ListTenants (OPERATOR_ONLY) and sees its own tenant only, without it.
// Read once per token typed in.
let tenantsOf = null;
async function pickTenants() {
  if (tenantsOf === token()) return;
  tenantsOf = token();
  const picker = document.getElementById("tenant-pick");
  const select = document.getElementById("tenant");
  const picked = tenant();
  let names = [];
  try {
    let pageToken = "";
    do {
      const reply = await call("TenantService", "ListTenants", { pageSize: 1000, pageToken }, "");
      names = names.concat((reply.tenants || []).map((t) => t.name));
      pageToken = reply.nextPageToken || "";
    } while (pageToken);
  } catch {
    // Not an operator's token: its own tenant only, no pick.
    picker.hidden = true;
    if (picked) {
      setTenant("");
      route();
    }
    return;
  }
  replace(select, new Option("All tenants", ""), ...names.map((name) => new Option(name, name)));
  if (picked && !names.includes(picked)) {
    setTenant("");  // gone since: every tenant's again
    route();
    return;
  }
  select.value = tenant();
  picker.hidden = false;
}

document.getElementById("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = document.getElementById("token");
  setToken(input.value.trim());
  input.value = "";
  input.placeholder = token() ? "token set" : "bearer token";
  route();
});
document.getElementById("token-forget").addEventListener("click", () => {
  setToken("");
  document.getElementById("token").placeholder = "bearer token";
  route();
});
document.getElementById("tenant").addEventListener("change", (event) => {
  setTenant(event.target.value);
  route();
});
document.getElementById("token").placeholder = token() ? "token set" : "bearer token";
window.addEventListener("hashchange", route);
route();
