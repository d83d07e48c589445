"""The same seed draws the same values whatever the process imported before: hypothesis's pool of
constants found in "local" modules is pinned empty for memconform's runs (core/profile.py,
draws_from_the_seed_alone). Without the pin, importing one more module of ours changed a model-based
check's sequences and a mutant's verdict."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

DRAWS = textwrap.dedent("""
    import hashlib, sys
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "import":
        import many_constants  # a local module full of constants hypothesis would mix into its draws
    if sys.argv[3] == "pin":
        from memconform.core.profile import Profile
        Profile.named("ci").hypothesis_settings()  # what every memconform run asks first
    from hypothesis import given, settings, strategies as st
    seen = []
    @settings(derandomize=True, max_examples=300, database=None)
    @given(st.integers(), st.text(max_size=20))
    def collect(n, s):
        seen.append((n, s))
    collect()
    print(hashlib.sha256(repr(seen).encode()).hexdigest())
""")


def draws(folder: Path, imported: bool, pinned: bool) -> str:
    done = subprocess.run([sys.executable, "-c", DRAWS, str(folder), "import" if imported else "skip",
                           "pin" if pinned else "leave"], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_the_seed_alone_decides_the_draws(tmp_path: Path) -> None:
    (tmp_path / "many_constants.py").write_text(
        "\n".join(f"C{i} = {7919 * i + 123456789}\nS{i} = 'zq-constant-{i}'" for i in range(300)), encoding="utf-8")
    assert draws(tmp_path, imported=False, pinned=True) == draws(tmp_path, imported=True, pinned=True)
    # the positive control: unpinned, the module's constants change what the same seed draws
    assert draws(tmp_path, imported=False, pinned=False) != draws(tmp_path, imported=True, pinned=False)
