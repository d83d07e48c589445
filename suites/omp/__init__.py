"""Open Memory Protocol v0.1 suite (OMP-Core, OMP-Search, OMP-Full)."""
