"""Layer 8, the upstream bundle: the minimal kernel, its `.info`, repro.py, ISSUE.md (templates/), logs,
IR and statistics, redacted and published atomically (write.py).

May import: every layer below (core to diagnosis)."""
