"""Benchmark suites and performance measurements for teamenvs."""
