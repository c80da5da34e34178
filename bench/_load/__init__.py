"""The parts of bench/load (the command: arguments, the round loop, the report): the
open-loop generator processes, the probe beside them, the clients of each system and
how their figures are put together."""
