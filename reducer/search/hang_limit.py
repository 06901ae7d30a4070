"""When a candidate of a hang is first looked at. A candidate that hangs somewhere else, or compiles slowly,
should not cost the original's full limit; so a candidate still running after a multiple of the slowest
compile that finished lately in this run (all no bigger than the original; never less than a floor, never
more than the full limit) has its stack sampled, and is stopped unless it hangs where the bug does. One
that does is only a suspect (a slow compile is not a hang): it runs on to the full limit (see Oracle)."""

from __future__ import annotations

import threading
from collections import deque

HANG_FLOOR = 5.0  # seconds: the shortest limit a suspected hang gets
HANG_FACTOR = 5  # ... else this many times the slowest recent finishing compile
RECENT = 20  # finishing compiles remembered


class HangLimit:
    def __init__(self) -> None:
        self._recent: deque[float] = deque(maxlen=RECENT)
        self._lock = threading.Lock()

    def finished(self, seconds: float) -> None:
        """A compile of this run ended (with or without an error) after `seconds`."""
        with self._lock:
            self._recent.append(seconds)

    def limit(self, full: float) -> float:
        """The limit of the next candidate whose own limit is `full`."""
        with self._lock:
            slowest = max(self._recent, default=0.0)
            return min(full, max(HANG_FLOOR, HANG_FACTOR * slowest))
