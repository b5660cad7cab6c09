"""Running the ns-3 program: its progress on a bar, a wall-time limit it keeps itself (it stops
cleanly and writes what it measured), and a kill if it does not."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from ...errors import LossyncError
from ...progress import RunTimeout
from ...progress import bar as progress_bar

#: Wall seconds between the program's `progress T` lines when a bar shows them.
PROGRESS_EVERY_S = 0.5
#: How long past its own limit the program may take to stop (it checks every simulated
#: millisecond, which can take this long at 10 Gb/s in slow start) before it is killed.
KILL_AFTER_S = 15.0


def run_program(exe: Path, params: str, out: Path, duration_s: float, limit_s: float | None, progress: bool | None) -> float:
    """Runs the program on `params` (a parameter file's text, without `progress`) into `out` and
    returns its wall time. limit_s: the wall-time limit it stops itself at (None: none). A failure
    is a LossyncError with the tail of its stderr; a program killed at the limit plus
    KILL_AFTER_S, a RunTimeout."""
    bar = progress_bar(round(duration_s, 6), "ns-3", "sim s", progress)
    if bar is not None:
        params += f"progress {PROGRESS_EVERY_S!r}\n"
    (out / "params.txt").write_text(params)
    lines: list[str] = []

    def read(stream) -> None:
        for line in stream:
            if line.startswith("progress ") and bar is not None:
                try:
                    reached = float(line.split()[1])
                except ValueError:
                    lines.append(line)
                    continue
                bar.update(reached - bar.n)
            else:
                lines.append(line)

    t0 = time.perf_counter()
    with open(out / "stdout.txt", "w") as stdout:
        proc = subprocess.Popen([str(exe), str(out / "params.txt"), str(out)], stdout=stdout, stderr=subprocess.PIPE, text=True)
    reader = threading.Thread(target=read, args=(proc.stderr,), daemon=True)
    reader.start()
    try:
        try:
            code = proc.wait(timeout=None if limit_s is None else limit_s + KILL_AFTER_S)
        except subprocess.TimeoutExpired:
            raise RunTimeout(f"timeout: ns-3 did not stop at its {limit_s:g} s wall-time limit and was killed after "
                             f"{limit_s + KILL_AFTER_S:g} s; nothing was measured") from None
    finally:
        if proc.poll() is None:  # a timeout, Ctrl-C or any error here: the program goes too
            proc.kill()
            proc.wait()
        reader.join(timeout=5)
        proc.stderr.close()
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    if code != 0:
        tail = "".join(lines[-15:]).strip()
        raise LossyncError(f"engine ns3: the simulation failed (exit status {code}):\n{tail}")
    return wall


__all__ = ["KILL_AFTER_S", "PROGRESS_EVERY_S", "run_program"]
