"""An in-memory result-store (``testing.memory.MemoryStore``) for tests of the other services:
the same contract as the real store, passed by the same contract suite."""
