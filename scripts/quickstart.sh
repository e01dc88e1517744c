#!/usr/bin/env bash
# One command from a fresh Debian machine to a first result: installs what is missing, builds,
# then runs the default sweep (every strategy over a few sequence lengths) and renders it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --main  # what the main job needs; scripts/test.sh installs the rest
scripts/build.sh "$@"
./build/cli/hybridbench --version
./build/cli/hybridbench topo
./build/cli/hybridbench run --out hybridbench-quickstart.json
./build/cli/hybridbench report hybridbench-quickstart.json --html hybridbench-quickstart.html
echo "quickstart: report in hybridbench-quickstart.json, charts in hybridbench-quickstart.html" >&2
