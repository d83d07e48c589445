"""The memoryai checks by topic, in the order they run: `__all__` lists the check modules, and the
SuiteSpec's load_checks imports them in that order (suite.py names this package as its checks_module,
and in `document_checks` the modules `memconform validate` imports alone). This file imports none of
them, so importing one registers no other; a wrong declaration is refused when its module is imported
(core/check.py). Keep the order as written: sorting it would reorder the run."""

__all__ = [
    "document",
    "consumer",
    "profile",
    "roundtrip",
    "stateful",
    "producer",
    "domain_imports",
    "domain_records",
    "domain_pairs",
    # last: what can break a target (stored hostile inputs) runs after every other check
    "batch_failures",
    "hostile_input",
]
