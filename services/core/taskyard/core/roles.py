"""The roles a bus key is bound to: which kind of service signs with it.

A keyring entry ``role/kid:secret`` binds its key to a role (core.seal). A receiver
reads the role of a message from its own keyring, by the key id in the trailer, so a
sender cannot claim a role: it can only sign with a key it holds. What each role may
send to whom is the contract's table (``contract.SENDERS``).
"""

from __future__ import annotations

GATEWAY = "gateway"
SCHEDULER = "scheduler"
RESULT_STORE = "result-store"
WORKER_POOL = "worker-pool"

# In the order ``taskyard dev`` writes their keys.
ROLES = (GATEWAY, SCHEDULER, RESULT_STORE, WORKER_POOL)
