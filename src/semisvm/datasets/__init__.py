"""Data generators, split helpers and loaders for the benchmark sets."""

from ._generators import hide_labels, make_clock, make_g50c, make_two_moons

__all__ = ["hide_labels", "make_clock", "make_g50c", "make_two_moons"]
