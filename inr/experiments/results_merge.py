"""Runs of one comparison split over several processes or machines, their rows joined into one ``results.json``: a
long study run as parts (``--methods`` or ``--seed`` apart, each with its own ``--out``) becomes one, which the same
command then completes with ``--out`` the merged directory (it keeps every row it finds and writes the tables,
figures and paired differences of the whole).

    python -m inr.experiments.results_merge runs/part_a runs/part_b --out runs/part_a
    python -m inr.experiments.learned_init --kind ct ... --methods reptile,maml,paper --out runs/part_a

Every part must be the same comparison under the same protocol (refused otherwise, naming the keys that differ). A
row (method, signal, seed) in two parts must have the same numbers in both: the first part's is kept, and a row
that differs is refused. The merged file holds the rows and no summary until the command rewrites it. It is written
whole or not at all, and may replace one of the parts' own files: every part is read before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from inr.errors import InputError
from inr.experiments.comparison import row_key
from inr.experiments.results import NUMBERS, Results, load_results, results_record
from inr.experiments.runner import write_results
from inr.run.command import ExperimentParser, command


def results_of(part: Path) -> Results:
    """A part's results: ``part`` itself if it is a file, else its ``results.json``."""
    path = part if part.is_file() else part / "results.json"
    if not path.is_file():
        raise InputError(f"{part}: no results.json (a directory written by python -m inr.experiments.<name>)")
    return load_results(path)


def same_numbers(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two rows agree on every number but their seconds (a rerun's timing is not its result)."""
    keys = {k for k in set(a) | set(b) if k in NUMBERS and not k.startswith("seconds")}
    return all(a.get(k) == b.get(k) or (a.get(k) != a.get(k) and b.get(k) != b.get(k)) for k in keys)


def merged_rows(parts: list[tuple[Path, Results]]) -> list[dict[str, Any]]:
    """Every part's rows, in the parts' order, each (method, signal, seed) once.

    Example:
        >>> from inr.experiments.results import Results
        >>> a = Results("c", "0", {"comparison": "x"}, [0], [{"method": "m", "seed": 0, "psnr": 20.0}], [])
        >>> b = Results("c", "0", {"comparison": "x"}, [0], [{"method": "n", "seed": 0, "psnr": 21.0}], [])
        >>> [r["method"] for r in merged_rows([(Path("a"), a), (Path("b"), b)])]
        ['m', 'n']
    """
    first, protocol = parts[0]
    rows: dict[tuple, dict[str, Any]] = {}
    for path, results in parts:
        if results.protocol != protocol.protocol:
            keys = sorted(
                k for k in set(results.protocol) | set(protocol.protocol) if results.protocol.get(k) != protocol.protocol.get(k)
            )
            raise InputError(
                f"{path}: another comparison or protocol than {first}'s ({', '.join(keys[:4])}); merge only parts of one run"
            )
        for row in results.rows:
            key = row_key(row)
            if key in rows and not same_numbers(rows[key], row):
                raise InputError(
                    f"{path}: its row {key[0]} {key[1] or ''} seed {key[2]} has other numbers than an earlier part's"
                )
            rows.setdefault(key, row)
    return list(rows.values())


def main(argv: Optional[list[str]] = None) -> None:
    parser = ExperimentParser(__name__, __doc__)
    parser.add_argument("parts", nargs="+", help="directories (or results.json files) written by one comparison")
    parser.add_argument("--out", required=True, help="the directory whose results.json gets the joined rows")
    args = parser.parse_args(argv)

    def body() -> None:
        parts = [(Path(p), results_of(Path(p))) for p in args.parts]  # all read before anything is written
        rows = merged_rows(parts)
        first = parts[0][1]
        seeds = sorted({s for _, r in parts for s in r.seeds})
        record = results_record(first.command, first.version, first.protocol, seeds, rows, [])
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_results(
            out, f"{len(rows)} rows merged from {len(parts)} runs; rerun the command with --out {out} for the tables", record
        )
        print(
            f"wrote {out / 'results.json'}: {len(rows)} rows of {first.name} from {len(parts)} runs; rerun its command with --out {out} to write the tables"
        )

    command(body)


if __name__ == "__main__":
    main()
