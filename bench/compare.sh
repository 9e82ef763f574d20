#!/usr/bin/env bash
# Both overhead benches on one release build, one after the other, and one table of what
# each says codecrew adds to a plain answer (and, for the shared one, to a tool call):
#
#   bench/compare.sh PATH/TO/bench.sh        # the shared bench (outside this repository)
#
# The shared bench measures a call as a user meets it (a fresh home kept across runs, a
# `sh` CLI outside the workspace); `cargo bench --bench overhead` measures the narrower
# call and, in its last table, the same call as the shared one. Run it on a quiet
# machine; docs/PERFORMANCE.md says what each figure is made of.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

shared=${1:?usage: bench/compare.sh PATH/TO/shared/bench.sh}
[[ -f $shared ]] || { echo "no shared bench at $shared" >&2; exit 2; }
shared=$(cd "$(dirname "$shared")" && pwd)/$(basename "$shared")

echo "== building (release)" >&2
cargo build --release --locked --quiet
cargo bench --bench overhead --locked --no-run --quiet 2>/dev/null
binary=$PWD/target/release/codecrew
work=$(mktemp -d /tmp/codecrew-compare.XXXXXX)

echo "== shared bench ($shared)" >&2
BENCH_WORK=$work/shared bash "$shared" "$binary" >"$work/shared.out" 2>&1 ||
  { tail -20 "$work/shared.out" >&2; exit 1; }
echo "== cargo bench --bench overhead" >&2
cargo bench --bench overhead --locked --quiet >"$work/overhead.out" 2>/dev/null ||
  { tail -20 "$work/overhead.out" >&2; exit 1; }

size=$(stat -c %s "$binary")
python3 - "$work/shared/results/summary.json" "$work/overhead.out" "$size" "$(git rev-parse --short HEAD)" <<'PY'
import json, re, sys
summary, overhead, size, commit = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3]), sys.argv[4]
s = json.load(open(summary))
def added(variant):
    v = s.get(variant, {})
    if "ours" not in v or "floor" not in v:
        return "n/a"
    return f"{v['ours']['median_ms'] - v['floor']['median_ms']:.2f} ms"
adds = re.findall(r"added by codecrew\s+([\d.-]+) ms", overhead)
per_turn = re.search(r"keep_alive = false\s+[\d.]+ ms \(added ([\d.-]+) ms\)", overhead)
rows = [
    ("shared bench: plain answer, added (median)", added("plain")),
    ("shared bench: a tool call then the answer, added", added("tool")),
    ("cargo bench overhead: plain answer, added", f"{adds[0]} ms" if adds else "n/a"),
    ("cargo bench overhead: keep_alive = false, added", f"{per_turn.group(1)} ms" if per_turn else "n/a"),
    ("cargo bench overhead: as a user meets it, added", f"{adds[1]} ms" if len(adds) > 1 else "n/a"),
    ("release binary", f"{size / 1e6:.1f} MB"),
]
print(f"\ncodecrew {commit}: both benches, one build")
width = max(len(name) for name, _ in rows)
for name, value in rows:
    print(f"  {name:<{width}}  {value:>10}")
PY
echo "(outputs in $work)" >&2
