// The JSON API: one POST per unary call of the gRPC API, with the token typed
// into the page (kept in sessionStorage: gone with the tab).

const TOKEN_KEY = "taskyard.token";
// The tenant an operator picked in the header ("" = every tenant's), kept as the token is.
const TENANT_KEY = "taskyard.tenant";

export class ApiError extends Error {
  constructor(status, body) {
    super(body.message || `HTTP ${status}`);
    this.status = status;
    this.code = body.code || `HTTP_${status}`;
    this.reason = body.reason || "";
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function tenant() {
  return sessionStorage.getItem(TENANT_KEY) || "";
}

export function setTenant(value) {
  if (value) sessionStorage.setItem(TENANT_KEY, value);
  else sessionStorage.removeItem(TENANT_KEY);
}

// A URL of the API, with the picked tenant (?tenant=NAME) when there is one.
export function scoped(url) {
  if (!tenant()) return url;
  return `${url}${url.includes("?") ? "&" : "?"}tenant=${encodeURIComponent(tenant())}`;
}

export function headers(extra = {}) {
  const out = { ...extra };
  if (token()) out.Authorization = `Bearer ${token()}`;
  return out;
}

export async function call(service, method, body = {}) {
  const reply = await fetch(scoped(`/api/taskyard.v1.${service}/${method}`), {
    method: "POST",
    headers: headers({ "Content-Type": "application/json" }),
    body: JSON.stringify(body),
  });
  const data = await reply.json().catch(() => ({ message: reply.statusText }));
  if (!reply.ok) throw new ApiError(reply.status, data);
  return data;
}

let configPromise;
export function config() {
  configPromise ||= fetch("/api/config").then((r) => r.json());
  return configPromise;
}
