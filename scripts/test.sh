#!/usr/bin/env bash
# Installs lossync with its test dependencies, then runs the whole test suite: the linters (ruff on
# the Python code; rustfmt and clippy with warnings as errors on the Rust code), the Rust core's
# unit and integration tests, and the Python tests (among them the stub check, tests/test_stub.py,
# and the golden table of every shipped example's numbers, tests/test_golden.py). This is the
# README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet '.[test]'  # as a user installs it (not -e): the tests check what is installed
# A headless browser for the report's screenshot test (tests/test_report.py), from Debian's packages
# where this runs as root; elsewhere, or if it cannot be installed, that test skips and says why.
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
        || echo "scripts/test.sh: chromium not installed; the report's screenshot test will skip" >&2
fi
python3 -m ruff check python tests scripts
cargo fmt --all -- --check
cargo clippy --all-targets --all-features -- -D warnings  # --all-features: the benchmarks too (feature `bench`)
cargo test -p lossync-core
# The Python tests: first those marked `serial` alone (the kernel engine's real-time runs, whose
# health checks see any other load), then the rest on every core (pytest-xdist; at most 8 workers,
# as sweeps and studies start process pools of their own).
workers=$(( $(nproc) < 8 ? $(nproc) : 8 ))
status=0
python3 -m pytest -q -m serial || status=$?
python3 -m pytest -q -m "not serial" -n "$workers" --dist loadgroup || status=$?
exit "$status"
