#!/usr/bin/env bash
# Speed figures that two cores cannot show, on the 16-core device machine, in one call:
#  * loopmodel sweep on local Dask clusters of 1, 2, 4, 8 and 16 workers (points/s per worker);
#  * the before/after speed table (benchmarks/speed_table.py) of the baseline tree .base-src/src
#    against this tree, on that machine.
# The machine has no network: the Python packages loopmodel needs beyond its image come as wheels
# in .devwheels/ (pip download --python-version 3.12 ...). Results go to $OUT (default: ./device-out).
#   bash benchmarks/device_speed.sh [quick]
set -u
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT"
PY=${PY:-python3}
QUICK=${1:-}
{ date -u; nproc; lscpu 2>/dev/null | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)'; $PY --version; } > "$OUT/machine.txt" 2>&1
if [ -d .devwheels ]; then
  $PY -m pip install -q --no-index --find-links .devwheels pydantic pycparser 'dask[distributed]' cffi \
    typing_extensions > "$OUT/pip.txt" 2>&1 || echo "pip install failed" >> "$OUT/machine.txt"
fi
export PYTHONPATH=$PWD/src
workers=1,2,4,8,16; repeat=2; k=5
if [ "$QUICK" = quick ]; then workers=1,2; repeat=1; k=2; fi
timeout 300 $PY benchmarks/sweep_scaling.py --studies lc --workers $workers --repeat $repeat \
  --json "$OUT/sweep_scaling.json" > "$OUT/sweep_scaling.txt" 2>&1
echo "sweep_scaling exit $?" >> "$OUT/machine.txt"
timeout 200 $PY benchmarks/speed_table.py .base-src/src src --k $k --python "$(command -v $PY)" \
  --out "$OUT/speed_table.json" > "$OUT/speed_table.txt" 2> "$OUT/speed_table.err"
echo "speed_table exit $?" >> "$OUT/machine.txt"
