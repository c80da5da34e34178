// The suite's pulse (GET /api/pulse): one summary every half second, the same
// for every page the gateway serves, read from one stream of the suite's events.
// A page refetches what a pulse says changed; it never sees the events themselves.

import { open } from "./sse.js";

// fn() at most one at a time: a call while it runs makes one more run after it.
export function coalesce(fn) {
  let busy = false;
  let again = false;
  return async function run() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        await fn();
      } while (again);
    } finally {
      busy = false;
    }
  };
}

// follow(page, {onPulse(pulse), onResync()}) -> {close()}. onResync: the page may
// have missed changes (it just connected, or it read too slowly and pulses were
// skipped): fetch everything again.
export function follow(page, { onPulse, onResync }) {
  return open("/api/pulse", {
    onState: page.live,
    onError: (err) => page.fail(err),
    onMessage(kind, data) {
      if (kind === "lagged") onResync();
      if (kind !== "pulse") return;
      if (data.first) onResync();
      onPulse(data);
    },
  });
}
