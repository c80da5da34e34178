"""The web dashboard: an aiohttp site inside the gateway (``TASKYARD_HTTP_PORT``).

Its JSON API is the gateway's own public gRPC API, called over a private unix
socket of the same gRPC server with the browser's bearer token as metadata, so
every check of the gRPC edge (tokens, scopes, admission limits) applies
unchanged. Live views are server-sent events fed by ``WatchEvents`` and
``StreamTaskLogs``. The pages are hand-written ES modules under ``static/``.
Importing this package imports aiohttp: the gateway does so only when the
dashboard is on (docs/dashboard.md).
"""
