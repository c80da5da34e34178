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

// A URL of the API, with the picked tenant (?tenant=NAME) when there is one, or ``as``'s.
export function scoped(url, as = tenant()) {
  if (!as) return url;
  return `${url}${url.includes("?") ? "&" : "?"}tenant=${encodeURIComponent(as)}`;
}

// How a row of a tenant's is named in an operator's view of every tenant.
export function named(row, name) {
  return row.tenant ? `${row.tenant}/${name}` : name;
}

export function headers(extra = {}) {
  const out = { ...extra };
  if (token()) out.Authorization = `Bearer ${token()}`;
  return out;
}

// ``as``: act as this tenant (a row of a tenant's in an operator's view of every tenant;
// "" every tenant's); the picked one when not given.
export async function call(service, method, body = {}, as = undefined) {
  const reply = await fetch(scoped(`/api/taskyard.v1.${service}/${method}`, as === undefined ? tenant() : as), {
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
