"""Solvers: plain functions over arrays and operators."""
