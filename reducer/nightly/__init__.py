"""`reduce corpus DIR`: the nightly run over a folder of crashes. discover finds the cases, state keeps
their history in SQLite, job rechecks or reduces one case in its own process, executors run jobs here or
on Dask, buckets groups cases into bugs, report writes HTML/Markdown/JSON (templates/), run decides what
each case needs tonight and ties it together.

Layer 11, above reducer.session (a nightly job is one reduction) and reducer.capture (a .log case).
May import: every layer but reducer.cli."""
