"""Open Memory Protocol v0.1: constants, limits, options (readings in errata/omp.md)."""
