#!/usr/bin/env bash
# The simulator's fast-forward fuzzed against the full simulation with fresh seeds on the 16-core
# device machine, in one call (benchmarks/fuzz_fastforward.py: one worker per core).
# The machine has no network: the Python packages loopmodel needs beyond its image come as wheels
# in .devwheels/ (pip download --python-version 3.12 ...); the compiled simulator is carried
# (src/loopmodel/cachesim/_cachesim.abi3.so) or built there. Results go to $OUT (default: ./device-out).
#   bash benchmarks/device_fuzz.sh [EXAMPLES per worker and strategy] [SEED]
set -u
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT"
PY=${PY:-python3}
{ date -u; nproc; lscpu 2>/dev/null | grep -E 'Model name|^CPU\(s\)'; $PY --version; } > "$OUT/machine.txt" 2>&1
if [ -d .devwheels ]; then
  $PY -m pip install -q --no-index --find-links .devwheels cffi pycparser pydantic typing_extensions \
    > "$OUT/pip.txt" 2>&1 || echo "pip install failed" >> "$OUT/machine.txt"
fi
if ! PYTHONPATH=src $PY -c "import loopmodel.cachesim._cachesim" >> "$OUT/machine.txt" 2>&1; then
  (cd src && $PY loopmodel/cachesim/_build.py > "$OUT/build.txt" 2>&1) || echo "build failed" >> "$OUT/machine.txt"
fi
timeout 450 $PY benchmarks/fuzz_fastforward.py --examples "${1:-8000}" --seed "${2:-20261127}" \
  --out "$OUT/fuzz.json" > "$OUT/fuzz.txt" 2>&1
echo "fuzz exit $?" >> "$OUT/machine.txt"
