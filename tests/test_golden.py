"""The golden table (scripts/golden.py): every shipped example's numbers in the fluid engine, the
packet engine and the packet engine with send jitter are those stored in tests/golden/examples.json.
A change that moves any number fails here until the table is regenerated on purpose
(`python scripts/golden.py`), with the reason in the commit."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("golden", ROOT / "scripts" / "golden.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def test_every_example_gives_the_stored_numbers():
    diff = golden.differences(golden.load(), golden.compute())
    assert not diff, f"{len(diff)} numbers moved (regenerate with scripts/golden.py only on purpose):\n" + "\n".join(diff[:40])


def test_the_comparison_sees_a_moved_number():
    # The check itself can fail: a change in the ninth digit is seen, one in the fifteenth is not.
    stored = {"run": {"utilization": 0.912345678901, "engine": "fluid", "x": float("nan")}}
    moved = {"run": dict(stored["run"], utilization=0.912345688901)}
    assert golden.differences(stored, moved) == ["run: utilization: stored 0.912345678901, now 0.912345688901"]
    assert golden.differences(stored, {"run": dict(stored["run"], utilization=0.912345678901001)}) == []
    assert golden.differences(stored, {"run": dict(stored["run"], x=1.0)}) != []
    assert golden.differences(stored, {}) == ["run: no longer run"]
