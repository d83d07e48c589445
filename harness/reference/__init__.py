"""Reference implementations: real producers/consumers each suite's checks must pass against."""
