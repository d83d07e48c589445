"""The omp checks by topic, in the order they run: `__all__` lists the check modules, and the
SuiteSpec's load_checks imports them in that order (suite.py names this package as its checks_module,
and in `document_checks` the modules `memconform validate` imports alone). This file imports none of
them, so importing one registers no other; a wrong declaration is refused when its module is imported
(core/check.py). Keep the order as written: sorting it would reorder the run."""

__all__ = [
    "listing",
    "shape",
    "sort",
    "crud",
    "search",
    "imports",
    "import_paths",
    "auth",
    "stateful",
    "bad_input",
    "concurrency",
    "search_full",
    "security_ai",
    "fuzz",
    "domain_writes",
    "domain_params",
    "large_roundtrip",
    "export_document",
    # last: what can break a target (stored hostile inputs) runs after every other check
    "hostile_input",
]
