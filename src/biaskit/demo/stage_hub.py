"""Demo stage 'hub' (not built yet: its issue adds it)."""

from __future__ import annotations


def run(ctx) -> None:
    ctx.note("hub", "not built yet")
