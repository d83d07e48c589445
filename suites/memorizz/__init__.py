"""MemoRizz Memory Archive v1 suite."""
