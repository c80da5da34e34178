"""The parts of bench/compare (the command: arguments, the round loop, the report): the
systems it runs side by side, the servers they share and how their processes are counted."""
