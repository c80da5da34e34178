"""The reads: tasks and their pages, trees, explanations, failures and event summaries, each
straight from PostgreSQL (or the result cache), outside the committer."""
