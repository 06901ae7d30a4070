"""`reduce shapes`: a kernel over the user's list of calls on every target, its pass rates, the bugs met, and
the buckets that stand for the failing calls."""
