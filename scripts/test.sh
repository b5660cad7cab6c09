#!/usr/bin/env bash
# Installs lossync with its test dependencies, then runs the whole test suite: the linters (ruff on
# the Python code), the Rust core's unit and integration tests, and the Python tests. This is the README's test command; .ci/run
# calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet '.[test]'  # as a user installs it (not -e): the tests check what is installed
python3 -m ruff check python tests scripts
cargo test -p lossync-core
python3 -m pytest -q
