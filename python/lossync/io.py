"""Writing results so that nothing half-written ever looks complete.

`atomic_write` writes a file under a temporary name in the same folder and renames it into place
(POSIX rename is atomic within a file system), with the mode the user's umask gives a new file
(temporary files are created 0600). `write_result_set` does the same for a set of files that
belong together, such as a run's summary, series and figure: all are written first; the old
completion marker is removed, the files are renamed in, and the marker comes last, so a folder
whose marker exists holds one complete result.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Writer = Callable[[Path], Any]


def _umask() -> int:
    # Reading the umask means setting it; /proc avoids the (brief) change where it exists.
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def file_mode() -> int:
    """The mode `open(path, "w")` would give a new file: 0666 less the umask."""
    return 0o666 & ~_umask()


def atomic_write(path: str | Path, write: Writer) -> Path:
    """Calls `write(tmp)` for a temporary path beside `path`, then renames it to `path`. On any
    error (or Ctrl-C) the temporary file is removed and `path` is untouched."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    return atomic_write(path, lambda p: p.write_text(text))


def write_result_set(folder: str | Path, files: Mapping[str, Writer], marker: str, known: tuple[str, ...] = ()) -> list[Path]:
    """Writes `files` (name -> writer) into `folder` as one result. `marker` (one of the names)
    is renamed in last and is removed first, so it exists only beside a complete set; files
    named in `known` that this set does not write (an earlier run's figure, say) are removed."""
    assert marker in files
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=out))
    try:
        mode = file_mode()
        for name, write in files.items():
            write(staging / name)
            os.chmod(staging / name, mode)
        (out / marker).unlink(missing_ok=True)
        for name in known:
            if name not in files:
                (out / name).unlink(missing_ok=True)
        for name in files:
            if name != marker:
                os.replace(staging / name, out / name)
        os.replace(staging / marker, out / marker)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / name for name in files]
