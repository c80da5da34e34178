"""Shared test helpers (PostgreSQL clusters and friends)."""
