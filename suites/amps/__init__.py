"""AI Memory Portability Standard v0.1 suite: Producer (document checks) and Consumer (import/export)."""
