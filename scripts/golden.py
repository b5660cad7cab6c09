"""The golden table: the headline numbers of every shipped example in each core engine, stored in
tests/golden/examples.json, so that a refactor that changes a number fails CI
(tests/test_golden.py) until the table is regenerated on purpose:

    python scripts/golden.py            # rewrite tests/golden/examples.json
    python scripts/golden.py --check    # compare only; exit 1 and name every difference

Regenerate only when a number is meant to change, and say in the commit which numbers moved and why.

Each example runs shortened as tests/test_examples.py runs it (40 s, no warm-up; the 10 Gb/s
examples at 1 Gb/s for 10 s in the packet engines). The table holds every number of the summary
(links and flows included), its warnings, and for the time series and the event table each
column's count, sum and sum of squares, so a change of the samples shows too."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import lossync

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "golden" / "examples.json"
ENGINES = ["fluid", "packet", "packet:jitter"]
SHORT = ["run.duration=40", "run.warmup=0", "run.from_first_congestion=false"]
#: Relative tolerance of the comparison: far below any physical change (a refactor that moves one
#: operation changes a chaotic run by far more), above the last bits a libm may differ in.
REL = 1e-9
#: Summary fields that name the build, not the physics.
SKIP = {"version"}


def examples() -> list[Path]:
    return sorted(p for p in (ROOT / "examples").glob("*.toml") if not p.name.startswith("sweep-"))


def overrides(path: Path, engine: str) -> list[str] | None:
    """The overrides the example runs with in this engine, or None where the engine cannot run it."""
    sc = lossync.resolve(path)
    if engine == "fluid" and any(f.get("arrivals") for f in sc["flows"]):
        return None  # dynamic traffic is the packet engine's alone
    out = list(SHORT)
    if engine.startswith("packet") and sc["links"][0]["capacity_bps"] > 1e9:
        out += ['dumbbell.capacity="1Gbps"', "run.duration=10"]
    return out


def _flatten(value, prefix: str, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in SKIP:
                _flatten(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(value, list) and value and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        _column(value, prefix, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value


def _column(values, prefix: str, out: dict) -> None:
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    out[f"{prefix}#count"] = len(values)
    out[f"{prefix}#finite"] = len(finite)
    out[f"{prefix}#sum"] = math.fsum(finite)
    out[f"{prefix}#sumsq"] = math.fsum(v * v for v in finite)


def headline(path: Path, engine: str, extra: list[str]) -> dict:
    """Every number one run of the example reports."""
    if engine == "packet:jitter":
        from lossync.comparison import with_send_jitter

        doc = with_send_jitter(lossync.load_scenario(path), [*extra, 'engine="packet"'], path.parent)
        r = lossync.run(doc, base_dir=path.parent, warn=False)  # warnings are in the table
    else:
        r = lossync.run(path, [*extra, f'engine="{engine}"'], warn=False)
    out: dict = {}
    _flatten(r.summary, "", out)
    for name, frame in (("series", r.series), ("events", r.events)):
        if frame is None:
            continue
        for col in frame.columns:
            if frame[col].dtype.kind in "fiub":
                _column(frame[col].tolist(), f"{name}.{col}", out)
    return out


def compute() -> dict:
    table = {}
    for path in examples():
        for engine in ENGINES:
            extra = overrides(path, engine)
            if extra is not None:
                table[f"{path.stem} {engine}"] = headline(path, engine, extra)
    return table


def _same(a, b) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL, abs_tol=1e-12)
    return a == b


def differences(stored: dict, now: dict) -> list[str]:
    """One line per number that differs, is missing or is new."""
    lines = []
    for run in sorted(set(stored) | set(now)):
        if run not in now or run not in stored:
            lines.append(f"{run}: {'no longer run' if run not in now else 'new run'}")
            continue
        a, b = stored[run], now[run]
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b or not _same(a[key], b[key]):
                lines.append(f"{run}: {key}: stored {a.get(key, '(none)')!r}, now {b.get(key, '(none)')!r}")
    return lines


def _jsonable(table: dict) -> dict:
    """NaN and infinities as strings: JSON has none."""

    def fix(v):
        return repr(v) if isinstance(v, float) and not math.isfinite(v) else v

    return {run: {k: fix(v) for k, v in row.items()} for run, row in table.items()}


def load() -> dict:
    def unfix(v):
        return float(v) if v in ("nan", "inf", "-inf") else v

    raw = json.loads(TABLE.read_text())
    return {run: {k: unfix(v) for k, v in row.items()} for run, row in raw.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the stored table; write nothing")
    args = ap.parse_args()
    now = compute()
    if args.check:
        diff = differences(load(), now)
        print("\n".join(diff) or f"golden table: {len(now)} runs, every number as stored")
        return 1 if diff else 0
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(json.dumps(_jsonable(now), indent=1, sort_keys=True) + "\n")
    print(f"wrote {TABLE.relative_to(ROOT)}: {len(now)} runs, {sum(len(r) for r in now.values())} numbers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
