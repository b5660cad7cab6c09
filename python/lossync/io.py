"""Writing results so that nothing half-written ever looks complete.

`atomic_write` writes a file under a temporary name in the same folder and renames it into place
(POSIX rename is atomic within a file system), with the mode the user's umask gives a new file
(temporary files are created 0600). `write_result_set` does the same for a set of files that
belong together, such as a run's summary, series and figure: all are written first into a
staging folder; the old completion marker is removed, the files are renamed in, and the marker
comes last, naming each file with its SHA-256, so a folder whose marker exists holds one complete
result, and a file that does not belong to it is detected (`check_result_set`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .errors import InputFileError

Writer = Callable[[Path], Any]
#: `atomic_write`'s temporary files are `.<name>.<random>.tmp` beside their target.
TEMPORARY_SUFFIX = ".tmp"


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


#: The errors of a full disk or an exhausted quota (errno(3)): about the folder, not one file.
_FULL = (errno.ENOSPC, errno.EDQUOT)


def os_reason(e: OSError) -> str:
    """What went wrong, in words to follow a colon: "no such file or directory" (the OS's text with
    its capital dropped; the rest, which may hold a path, as it is). A full disk is said in the
    OS's words whoever raised it (pyarrow's text is "Error writing bytes to file. Detail: …")."""
    text = os.strerror(e.errno) if e.errno in _FULL else (e.strerror or str(e))
    return text[:1].lower() + text[1:]


def about(e: OSError, path: str | Path, note: str | None = None) -> OSError:
    """`e` as an error about `path`, the file the user asked for, not the temporary copy of it
    that failed; `note` says what that left behind. A full disk names the folder it filled."""
    if e.errno in _FULL:
        path = Path(path).parent
    return OSError(e.errno, os_reason(e) + (f"; {note}" if note else ""), str(path))


def atomic_write(path: str | Path, write: Writer) -> Path:
    """Calls `write(tmp)` for a temporary path beside `path`, then renames it to `path`. On any
    error (or Ctrl-C) the temporary file is removed and `path` is untouched."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMPORARY_SUFFIX, dir=path.parent)
    except OSError as e:
        raise about(e, path) from None
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        # The writer's own errors name the temporary file, or nothing (pyarrow's): they are this
        # file's. One naming another file is that file's.
        if e.filename in (tmp, None):
            raise about(e, path) from None
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def remove_temporaries(folder: str | Path) -> None:
    """Removes the temporary files `atomic_write` leaves when its process is killed (SIGKILL gives
    it no chance to clean up). Only for a folder no live writer uses (the caller holds its lock)."""
    for stale in Path(folder).glob(f".*{TEMPORARY_SUFFIX}"):
        stale.unlink(missing_ok=True)


def json_text(value: Any, pad: str = "") -> str:
    """`value` as JSON for people and programs: a table's keys one per line, indented; a list of
    tables one table per line. Each line is written by json's C encoder: `json.dumps(indent=2)`
    runs in pure Python, and took 26 s on the summary of 10^5 flows (this takes about a second)."""
    inner = pad + "  "
    if isinstance(value, dict) and value:
        items = (f"{inner}{json.dumps(str(k))}: {json_text(v, inner)}" for k, v in value.items())
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "[\n" + ",\n".join(inner + json.dumps(v) for v in value) + f"\n{pad}]"
    return json.dumps(value)


def write_text(path: str | Path, text: str) -> Path:
    return atomic_write(path, lambda p: p.write_text(text))


def sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


STAGING_PREFIX = ".partial-"


def _remove_dead_staging(out: Path) -> None:
    """Removes staging folders left by a writer that was killed (SIGKILL leaves no chance to
    clean up). A staging folder is named after its writer's pid, so a live writer's is kept."""
    for stale in out.glob(f"{STAGING_PREFIX}*"):
        try:
            pid = int(stale.name[len(STAGING_PREFIX):].split("-")[0])
            os.kill(pid, 0)
        except (ValueError, ProcessLookupError):
            shutil.rmtree(stale, ignore_errors=True)
        except PermissionError:  # a live process of another user
            pass


def write_result_set(folder: str | Path, files: Mapping[str, Writer], marker: str,
                     write_marker: Callable[[Path, dict[str, str]], Any], known: tuple[str, ...] = ()) -> list[Path]:
    """Writes `files` (name -> writer) into `folder` as one result, completed by `marker`:
    `write_marker(path, digests)` gets the SHA-256 of every other file, so the marker names the
    exact files it completes ([`check_result_set`]). The marker is removed first and renamed in
    last, so it exists only beside a complete set; files named in `known` that this set does not
    write (an earlier run's figure, say) are removed."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    _remove_dead_staging(out)
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=out))
    target, old_result = out / marker, "the previous result, if any, is untouched"
    try:
        mode = file_mode()
        for name, write in files.items():
            target = out / name
            write(staging / name)
        digests = {name: sha256(staging / name) for name in files}
        target = out / marker
        write_marker(staging / marker, digests)
        for name in [*files, marker]:
            os.chmod(staging / name, mode)
        (out / marker).unlink(missing_ok=True)
        old_result = f"{out} holds no complete result now"
        for name in known:
            if name not in files and name != marker:
                target = out / name
                target.unlink(missing_ok=True)
        for name in [*files, marker]:
            target = out / name
            os.replace(staging / name, target)
    except OSError as e:
        if isinstance(e, InputFileError):  # a field's error, not this folder's
            raise
        # Once the old marker is gone the folder no longer reads as a result (check_result_set).
        raise about(e, target, old_result) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [out / name for name in [*files, marker]]


def check_result_set(folder: str | Path, digests: Mapping[str, str]) -> None:
    """Raises InputFileError unless every file the marker names is in `folder` with its digest."""
    out = Path(folder)
    for name, digest in digests.items():
        path = out / name
        if not path.is_file():
            raise InputFileError(str(path), "missing: this result set is incomplete")
        if sha256(path) != digest:
            raise InputFileError(str(path), "does not match its summary (written by another run, or changed since)")
