"""memconform: conformance harness for AI memory portability specs."""

# The folder harness/ installs as the package `memconform` (pyproject.toml, package-dir). Imported under
# its folder name it would be a second copy of every module and of every suite's checks.
if __name__ != "memconform":
    raise ImportError(f"memconform's code is imported as `memconform`, not as {__name__!r}: "
                      "install it (`pip install -e .`) and `import memconform`")

__version__ = "0.1.0"
