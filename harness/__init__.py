"""memconform: conformance harness for AI memory portability specs."""

__version__ = "0.1.0"
