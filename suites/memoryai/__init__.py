"""MemoryAI Protocol v1 suite: Level 1 Producer, Level 2 Consumer, Level 3 Bidirectional, HTTP profile."""
