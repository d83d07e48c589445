"""The Toy Counter suite: an example of a memconform suite shipped by a third party (SPEC.md)."""
