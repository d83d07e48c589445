"""Edge Memory Protocol v1.0 second-opinion app, one process per operation.

python app.py OP INPUT_JSON_FILE OUTPUT_JSON_FILE
OP: append, delete, update, resolve, query. Exit 0 done, 3 refused, 4 no such operation, 2 usage, 1 failure.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import store  # noqa: E402
import writer  # noqa: E402
from bugs import UnknownBug, bugs_from_environment  # noqa: E402
from entry import Refused  # noqa: E402

DONE, FAILED, USAGE, REFUSED, NO_SUCH_OPERATION = 0, 1, 2, 3, 4

OPERATIONS = {
    "append": lambda request, bugs: writer.append(request["path"], request.get("entry"), bugs),
    "delete": lambda request, bugs: writer.delete(request["path"], request.get("id"), bugs),
    "update": lambda request, bugs: writer.update(
        request["path"], request.get("id"), request.get("entry"), bugs
    ),
    "resolve": lambda request, bugs: store.resolve(request["path"], bugs),
    "query": lambda request, bugs: store.query(request["path"], request, bugs),
}


def write_reply(path: str, reply: object) -> None:
    Path(path).write_text(json.dumps(reply, ensure_ascii=False), encoding="utf-8")


def read_request(path: str) -> dict:
    request = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(request, dict) or not isinstance(request.get("path"), str) or not request["path"]:
        raise ValueError('the input must be a JSON object with a "path" string')
    return request


def main(argv: list) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return USAGE
    operation, input_path, output_path = argv
    try:
        bugs = bugs_from_environment()
    except UnknownBug as error:
        print(f"refusing to start: {error}", file=sys.stderr)
        return USAGE
    if operation not in OPERATIONS:
        write_reply(output_path, {"error": f"no such operation: {operation}"})
        return NO_SUCH_OPERATION
    try:
        request = read_request(input_path)
    except (OSError, ValueError) as error:
        print(f"unreadable input: {error}", file=sys.stderr)
        return USAGE
    try:
        reply = OPERATIONS[operation](request, bugs)
    except Refused as refusal:
        write_reply(output_path, {"error": str(refusal)})
        return REFUSED
    except store.CorruptFile as error:
        print(f"failed: {error}", file=sys.stderr)
        return FAILED
    write_reply(output_path, reply)
    return DONE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
