"""Known-broken implementations: subclasses of a reference that each break exactly one rule."""
