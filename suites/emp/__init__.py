"""Edge Memory Protocol v1.0 suite."""
