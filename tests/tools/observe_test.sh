#!/usr/bin/env bash
# Drives the observability switches from the outside on lazyfuse-observe-demo: LAZYFUSE_LOG's
# groups, cuts and recompile explanations (stderr), LAZYFUSE_PROFILE's table against the
# program's own counters, and LAZYFUSE_TRACE_FILE parsed as Chrome trace JSON.
set -u
demo=$1
dir=$(mktemp -d /tmp/lf-observe-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export LAZYFUSE_CACHE_DIR=off

# The log: groups with their members, each cut with its node, the recompile's explanation.
LAZYFUSE_LOG=1 "$demo" >"$dir/out" 2>"$dir/err" || { cat "$dir/err"; fail "demo with LAZYFUSE_LOG=1"; }
grep -q "^\[lazyfuse\]   group 0 (pointwise, 3 ops): mul#[0-9]* add#[0-9]* relu#[0-9]*$" "$dir/err" || { cat "$dir/err"; fail "log: a group and its ops"; }
grep -q "^\[lazyfuse\]   cut: add#[0-9]* starts group 0 (no-producer-group)$" "$dir/err" || { cat "$dir/err"; fail "log: a cut"; }
grep -q "compiled lf_[0-9a-f]\{16\}: the first kernel of these ops" "$dir/err" || { cat "$dir/err"; fail "log: first kernel"; }
grep -q "compiled lf_[0-9a-f]\{16\}: new: .*input 1: transposed layout (was contiguous)" "$dir/err" \
  || { cat "$dir/err"; fail "log: the recompile names the transposed input"; }

# The profile: its launch total is the program's kernels_launched; replayed plans are profiled.
LAZYFUSE_PROFILE=1 "$demo" >"$dir/out" 2>"$dir/err" || { cat "$dir/err"; fail "demo with LAZYFUSE_PROFILE=1"; }
launched=$(sed -n 's/^launched=\([0-9]*\) .*/\1/p' "$dir/out")
replayed=$(sed -n 's/.* replayed=\([0-9]*\)$/\1/p' "$dir/out")
[ "$replayed" -ge 1 ] || { cat "$dir/out"; fail "the demo replays a flush plan"; }
grep -q "^\[lazyfuse\] profile: 3 kernels, $launched launches, " "$dir/err" || { cat "$dir/out" "$dir/err"; fail "profile: launches"; }
grep -q "^  lf_[0-9a-f]\{16\} *4 .* mul,add,relu$" "$dir/err" || { cat "$dir/err"; fail "profile: the replayed kernel's 4 launches"; }
grep -q "flushes ($replayed replayed plans)" "$dir/err" || { cat "$dir/err"; fail "profile: flushes"; }
grep -q "x floor" "$dir/err" && fail "profile: no floor column without LAZYFUSE_PROFILE_FLOOR_GBS"
LAZYFUSE_PROFILE=1 LAZYFUSE_PROFILE_FLOOR_GBS=20 "$demo" >"$dir/out" 2>"$dir/err" || fail "demo with a floor"
grep -q "x floor" "$dir/err" || { cat "$dir/err"; fail "profile: the floor column"; }
(LAZYFUSE_PROFILE=2 "$demo" >"$dir/out" 2>"$dir/err") 2>/dev/null && fail "LAZYFUSE_PROFILE=2 is refused"
grep -q "LAZYFUSE_PROFILE=2" "$dir/err" || { cat "$dir/err"; fail "bad LAZYFUSE_PROFILE message"; }

# The trace: JSON a browser opens; complete events with ts/dur in microseconds, one per launch.
LAZYFUSE_TRACE_FILE="$dir/trace.json" "$demo" >"$dir/out" 2>"$dir/err" || { cat "$dir/err"; fail "demo with a trace"; }
launched=$(sed -n 's/^launched=\([0-9]*\) .*/\1/p' "$dir/out")
python3 - "$dir/trace.json" "$launched" <<'PY' || fail "trace file"
import json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e["ph"] == "X"]
cats = {e["cat"] for e in ev}
assert {"flush", "fuse", "compile", "launch"} <= cats, cats
for e in ev:
    assert e["dur"] >= 0 and e["ts"] >= 0 and isinstance(e["tid"], int), e
launches = [e for e in ev if e["cat"] == "launch"]
assert len(launches) == int(sys.argv[2]), (len(launches), sys.argv[2])
assert all(e["name"].startswith("lf_") and len(e["name"]) == 19 for e in launches)
compiles = [e for e in ev if e["cat"] == "compile"]
assert any("transposed" in e["args"]["why"] for e in compiles), compiles
# Each launch lies inside a flush on the same thread.
flushes = [e for e in ev if e["cat"] == "flush"]
for l in launches:
    assert any(f["tid"] == l["tid"] and f["ts"] <= l["ts"] + 1e-3 and l["ts"] + l["dur"] <= f["ts"] + f["dur"] + 1e-3
               for f in flushes), l
PY
LAZYFUSE_TRACE_FILE="$dir/no/such/dir/t.json" "$demo" >"$dir/out" 2>"$dir/err" || fail "an unwritable trace file is no error"
grep -q "LAZYFUSE_TRACE_FILE: cannot write" "$dir/err" || { cat "$dir/err"; fail "unwritable trace warning"; }
# A setting outside what the README allows is an error naming the variable, not a silent choice.
if LAZYFUSE_ATTENTION_ROWS=4 "$demo" >"$dir/out" 2>"$dir/err"; then fail "LAZYFUSE_ATTENTION_ROWS=4 was accepted"; fi
grep -q "LAZYFUSE_ATTENTION_ROWS=4: expected 0 (auto), 64 or 128" "$dir/err" || { cat "$dir/err"; fail "bad setting's message"; }
echo "observability: ok"
