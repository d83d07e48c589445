"""The pytest plugin's --mc-require-hooks: a level not assessed for want of a test hook fails the session."""

from __future__ import annotations

from pathlib import Path

pytest_plugins = ["pytester"]


def test_require_hooks_fails_a_hookless_target(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))
    result = pytester.runpytest_subprocess(
        "--pyargs", "memconform.suites.memoryai", "-q", "-p", "no:cacheprovider", "--mc-require-hooks",
        "--mc-target", "python:test_memoryai_verdicts:NoHooks",
    )
    result.stdout.fnmatch_lines(["*memconform exit code: 1*"])
    assert result.ret == 1
