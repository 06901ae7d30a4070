"""The shape map as a picture (shape_map.svg): each call of the list as a point over the two dims that vary
most among the failing calls (one dim: over it alone), one panel per target, coloured by its verdict, one colour
per bug; people look at this rather than read the table."""

from __future__ import annotations

import io
from collections.abc import Sequence

from reducer.shapes.buckets import DimGroup
from reducer.shapes.grid import COMPILES, INVALID, NO_VERDICT, WRONG, Cell

COLOURS = {COMPILES: "#4caf50", WRONG: "#ff9800", INVALID: "#9e9e9e", NO_VERDICT: "#e0e0e0"}
BUG_COLOURS = ("#d32f2f", "#7b1fa2", "#1976d2", "#5d4037", "#c2185b", "#00796b")


def deciding(groups: Sequence[DimGroup], cells: list[Cell]) -> list[DimGroup]:
    """The (at most two) dim groups with the most distinct values among the failing calls, then overall."""
    failing = [c.line.shapes for c in cells if c.bug]

    def spread(group: DimGroup) -> tuple[int, int]:
        return len({group.value(s) for s in failing}), len({group.value(c.line.shapes) for c in cells})

    return sorted(groups, key=spread, reverse=True)[:2]


def shape_map_svg(cells: list[Cell], groups: Sequence[DimGroup], targets: list[str]) -> str:
    """The picture as SVG text ('' when no dim varies)."""
    axes_groups = deciding(groups, cells)
    if not axes_groups:
        return ""
    # Imported here, not at the top: every `reduce` command loads this module, few draw (matplotlib costs ~0.5 s).
    import matplotlib

    matplotlib.use("Agg")  # no screen: files only
    import matplotlib.pyplot as plt

    bugs = list(dict.fromkeys(c.bug for c in cells if c.bug))
    figure, panels = plt.subplots(len(targets), 1, figsize=(7, 1.2 + 1.6 * len(targets)), squeeze=False)
    for panel, target in zip(panels[:, 0], targets, strict=True):
        mine = [c for c in cells if c.target == target]
        for label, colour, chosen in _series(mine, bugs):
            x = [axes_groups[0].value(c.line.shapes) for c in chosen]
            y = [axes_groups[1].value(c.line.shapes) for c in chosen] if len(axes_groups) > 1 else [0] * len(x)
            panel.scatter(x, y, s=22, c=colour, label=f"{label} ({len(chosen)})", edgecolors="none")
        panel.set_title(target, fontsize=9, loc="left")
        panel.set_xlabel(axes_groups[0].label, fontsize=8)
        if len(axes_groups) > 1:
            panel.set_ylabel(axes_groups[1].label, fontsize=8)
        else:
            panel.set_yticks([])
        panel.tick_params(labelsize=7)
        panel.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    figure.tight_layout()
    text = io.StringIO()
    figure.savefig(text, format="svg")
    plt.close(figure)
    return text.getvalue()


def _series(cells: list[Cell], bugs: list[str]) -> list[tuple[str, str, list[Cell]]]:
    series = []
    for n, bug in enumerate(bugs):
        chosen = [c for c in cells if c.bug == bug]
        if chosen:
            series.append((f"{chosen[0].verdict}: {bug}", BUG_COLOURS[n % len(BUG_COLOURS)], chosen))
    for verdict, colour in COLOURS.items():
        chosen = [c for c in cells if c.verdict == verdict and not c.bug]
        if chosen:
            series.append((verdict, colour, chosen))
    return series
