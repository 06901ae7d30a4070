"""The Jinja2 templates a package keeps in its templates/ folder (package data, so they travel with an
installed wheel): a missing variable is an error, not an empty string; HTML templates are escaped."""

from __future__ import annotations

import functools

import jinja2

from reducer.core.words import counted


@functools.cache
def templates(package: str, trim_blocks: bool = False) -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(["html"]),
        keep_trailing_newline=True,
        trim_blocks=trim_blocks,
    )
    environment.filters["counted"] = counted  # {{ n | counted("op") }}: "1 op", "3 ops"
    return environment
