"""`reduce shapes`: a kernel over the user's calls on every target. grid compiles each call (and checks what it
computes where that runs here), buckets finds the representative shapes that stand for the failing calls,
dispatch writes and checks the module a user pastes into their model, cluster spreads a long list over Dask,
figure and report draw and write the plan, plan ties it together.

Layer 12, above reducer.session (a bug met is reduced as `reduce` does) and reducer.nightly (its executors).
May import: every layer but reducer.cli."""
