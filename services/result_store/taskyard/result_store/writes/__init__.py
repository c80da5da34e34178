"""The appliers: each kind of write as the rows, events and replies of one drain (committer.py),
with the row helpers only they use."""
