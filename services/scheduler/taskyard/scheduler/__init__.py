"""The scheduler: priority lanes, leases and dispatch to worker pools.

It keeps no custody: its lanes are a cache of the QUEUED rows in PostgreSQL,
rebuilt from the result-store on start and refreshed by polling, so a crash
or a lost message only ever delays a task.
"""
