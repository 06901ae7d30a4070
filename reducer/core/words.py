"""Counts in prose: "1 op", "3 ops"."""

from __future__ import annotations


def counted(number: int, noun: str) -> str:
    """`number` and `noun`, the noun in the plural (with an s) unless the number is one."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
