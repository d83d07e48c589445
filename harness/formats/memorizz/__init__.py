"""MemoRizz Memory Archive v1: constants, canonical JSON, validation (readings in errata/memorizz.md)."""
