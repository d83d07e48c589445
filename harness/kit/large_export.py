"""How large the own-export round trips grow: past 1 MB in the `ci` profile, past 10 MB in the others.

Real implementations meet a body cap at such sizes (Express's `limit: '1mb'`, a proxy's 10 MB): the
round trip must cross them, in MiB as well as in MB, to show one. Each suite that runs such a check
lists OPTION_SPEC in its options table (`<suite>.large_export_mb`); `profile` (the default) takes the
size from the run's profile, a number of MB pins it.
"""

from __future__ import annotations

from memconform.core.check_context import CheckContext
from memconform.core.options import OptionSpec
from memconform.core.results import HarnessError

OPTION = "large_export_mb"
# past 1 MiB (1.05 MB) and past 10 MiB (10.5 MB), with room
PROFILE_MB = {"ci": 1.2, "default": 11.0, "thorough": 11.0, "strict": 11.0}
HELP = ("the size the own-export round trip grows to, in MB: 'profile' (ci 1.2, default and thorough 11) "
        "or a number")

OPTION_SPEC = OptionSpec(OPTION, "profile", (), HELP)


def target_bytes(ctx: CheckContext) -> int:
    """The export size, in bytes, the run's round trip must pass."""
    value = ctx.option(OPTION)
    if value == "profile":
        return int(PROFILE_MB.get(ctx.profile.name, PROFILE_MB["default"]) * 1_000_000)
    try:
        mb = float(value)
    except ValueError:
        raise HarnessError(f"option {OPTION}={value!r} is neither 'profile' nor a number of MB") from None
    if not 0 < mb <= 60:  # the response cap of a run is 64 MiB
        raise HarnessError(f"option {OPTION}={value!r}: give a size between 0 and 60 MB")
    return int(mb * 1_000_000)


def records_for(ctx: CheckContext, bytes_per_record: int, least: int = 1) -> int:
    """How many records of about `bytes_per_record` (as the export writes them) pass the size."""
    return max(least, -(-target_bytes(ctx) // bytes_per_record) + 1)
