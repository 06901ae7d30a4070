"""`reduce corpus DIR`: the nightly run over a folder of crashes. discover finds the cases, state keeps
their history in SQLite, plan decides what each case needs, job does it in its own process, executors
run jobs here or on Dask, buckets groups cases into bugs, report writes HTML/Markdown/JSON, run ties it
together."""
