"""Demo stage 'templates' (not built yet: its issue adds it)."""

from __future__ import annotations


def run(ctx) -> None:
    ctx.note("templates", "not built yet")
