"""Finding the `ns3` wheel and compiling the ns-3 engine's program (dumbbell.cc) against its
headers and libraries, with the defines the wheel was built with, once per source, ns-3 version
and compiler, into a cache directory."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

from ...errors import LossyncError, ScenarioError

SOURCE = Path(__file__).resolve().parent / "dumbbell.cc"
#: ns-3 libraries the program links (each one's static TypeId registration must run).
LIBS = ["applications", "internet", "bridge", "traffic-control", "point-to-point", "network", "stats", "core"]
#: The defines the wheel's libraries were built with (lib64/cmake/ns3/ns3Targets.cmake), so that
#: inline header code matches them.
DEFINES = ["NS3_BUILD_PROFILE_RELEASE", "NS3_LOG_ENABLE", "NS3_ASSERT_ENABLE", "__LINUX__"]
MISSING = "\"ns3\" needs the optional extra: pip install 'lossync[ns3]'"

def ns3_root() -> Path:
    """The installed `ns3` wheel's directory (with include/ and lib64/), or LossyncError."""
    try:
        spec = importlib.util.find_spec("ns3")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise ScenarioError("engine", MISSING)
    for loc in list(spec.submodule_search_locations or []) + ([str(Path(spec.origin).parent)] if spec.origin else []):
        root = Path(loc)
        if (root / "include" / "ns3" / "tcp-socket-base.h").is_file() and any((root / "lib64").glob("libns3*-core.so")):
            return root
    raise ScenarioError("engine", MISSING + " (the installed ns3 package has no C++ headers and libraries)")


def ns3_version() -> str:
    import importlib.metadata  # 15 ms: only when ns-3 is built or run

    try:
        return importlib.metadata.version("ns3")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def cache_dir() -> Path:
    base = os.environ.get("LOSSYNC_CACHE_DIR") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "lossync")
    return Path(base) / "ns3"


def _build_command(root: Path, out: Path) -> list[str]:
    lib = root / "lib64"
    core = sorted(lib.glob("libns3*-core.so"))[0].name  # libns3.44-core.so
    prefix = core[len("lib"):-len("-core.so")]  # ns3.44
    cxx = os.environ.get("CXX", "g++")
    return [
        cxx, "-std=c++20", "-O2", *(f"-D{d}" for d in DEFINES), f"-I{root / 'include'}",
        str(SOURCE), "-o", str(out),
        f"-L{lib}", "-Wl,--no-as-needed", *(f"-l{prefix}-{m}" for m in LIBS),
        f"-Wl,-rpath,{lib}", "-lpthread", "-ldl",
    ]


def build_program() -> Path:
    """Compiles dumbbell.cc once per (source, ns-3 version, compiler) into the cache directory
    (`~/.cache/lossync/ns3/<hash>/dumbbell`, or under $LOSSYNC_CACHE_DIR) and returns its path.
    Concurrent callers wait for one compilation (a file lock)."""
    root = ns3_root()
    probe = _build_command(root, Path("dumbbell"))
    h = hashlib.sha256()
    for src in sorted(SOURCE.parent.glob("*.[ch]*")):  # the program and the headers it includes
        if src.suffix in (".cc", ".h"):
            h.update(src.read_bytes())
    h.update(ns3_version().encode())
    h.update(json.dumps(probe).encode())
    d = cache_dir() / h.hexdigest()[:16]
    exe = d / "dumbbell"
    if exe.is_file():
        return exe
    if shutil.which(probe[0]) is None:
        raise LossyncError(f"engine ns3 compiles a C++20 program: no compiler {probe[0]!r} found (set CXX or install g++)")
    d.mkdir(parents=True, exist_ok=True)
    import fcntl

    with open(d / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if exe.is_file():
            return exe
        tmp = d / f".dumbbell.{os.getpid()}.tmp"
        r = subprocess.run(_build_command(root, tmp), capture_output=True, text=True)
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            first = "\n".join((r.stderr or r.stdout).strip().splitlines()[:15])
            raise LossyncError(f"engine ns3: compiling {SOURCE.name} failed:\n{first}")
        os.replace(tmp, exe)
    return exe
