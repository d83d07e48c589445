"""memorizz's own `validate_archive` on one archive file (its import and json.loads included, as a user
of it pays them), the limits raised to the file's: run with an interpreter that has memorizz (it is
never a dependency of memconform: `tox -e bench-memorizz`, or `bench/table.py --memorizz-python PY`).
Exit 0 valid, 1 refused.

    python bench/floors/memorizz_validate_archive.py FILE
"""

import json
import sys


def main(path: str) -> int:
    from memorizz.memory_archive import MemoryArchiveError, validate_archive

    raw = open(path, "rb").read()
    try:
        validate_archive(json.loads(raw), max_bytes=max(len(raw) * 2, 50 * 2**20), max_records=10**7)
    except MemoryArchiveError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
