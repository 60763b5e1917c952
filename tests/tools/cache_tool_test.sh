#!/usr/bin/env bash
# Drives lazyfuse-cache as a user would: run a program that fills a temporary cache, list, show,
# stats, verify; corrupt an entry and verify again (must fail); bad arguments; prune; clear.
set -u
tool=$1
filler=$2
dir=$(mktemp -d /tmp/lf-cache-tool-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect_exit() {  # code, command...
  local want=$1; shift
  "$@" >"$dir/out" 2>"$dir/err"; local got=$?
  [ "$got" -eq "$want" ] || { cat "$dir/out" "$dir/err"; fail "'$*' exited $got, expected $want"; }
}
export LAZYFUSE_CACHE_DIR="$dir/cache"

out=$("$filler") || fail "filler failed: $out"
[ "$out" = "compiled=3 disk_hits=0" ] || fail "first run: $out"
out=$("$filler") || fail "filler failed: $out"
[ "$out" = "compiled=0 disk_hits=3" ] || fail "second run should compile nothing: $out"

expect_exit 0 "$tool" list
[ "$(wc -l <"$dir/out")" -eq 3 ] || { cat "$dir/out"; fail "list: expected 3 lines"; }
grep -q "cpu" "$dir/out" || fail "list shows the backend"
grep -q "sum" "$dir/out" || fail "list shows the fused ops"
grep -q "float32:contig" "$dir/out" || fail "list shows dtypes and layout"
expect_exit 0 "$tool" list --sort=size --json
grep -q '"summary"' "$dir/out" || fail "list --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==3 and all(e["ok"] for e in d)' "$dir/out" \
  || fail "list --json is not the expected JSON"
expect_exit 0 "$tool" --dir "$dir/cache" list --sort time
hash=$(head -1 "$dir/out" | cut -d' ' -f1)

expect_exit 0 "$tool" show "$hash"
grep -q "^key:  *cpu|" "$dir/out" || fail "show prints the key"
grep -q "define" "$dir/out" || fail "show prints the LLVM IR"
expect_exit 0 "$tool" show "$hash" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["key"].startswith("cpu|") and "define" in d["source"]' "$dir/out" \
  || fail "show --json"
expect_exit 0 "$tool" stats
grep -q "entries: 3" "$dir/out" || fail "stats"
expect_exit 0 "$tool" stats --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["entries"]==3' "$dir/out" || fail "stats --json"
expect_exit 0 "$tool" verify

# Corrupt one entry: verify fails and names it; list marks it BAD; a run replaces it.
entry=$(ls "$dir/cache"/*.lfk | head -1)
printf '\xff' | dd of="$entry" bs=1 seek=100 conv=notrunc status=none
expect_exit 1 "$tool" verify
grep -q "BAD .*checksum" "$dir/out" || fail "verify names the bad entry"
expect_exit 0 "$tool" list
grep -q "BAD" "$dir/out" || fail "list marks the bad entry"
out=$("$filler" 2>"$dir/err") || fail "filler with a corrupt entry"
[ "$out" = "compiled=1 disk_hits=2" ] || fail "corrupt entry recompiled: $out"
grep -q "unusable" "$dir/err" || fail "corrupt entry reported"
expect_exit 0 "$tool" verify

# Errors: clear messages and non-zero exits, never a crash.
expect_exit 2 "$tool" frobnicate
grep -q "unknown command" "$dir/err" || fail "unknown command message"
expect_exit 2 "$tool" list --sort=colour
expect_exit 2 "$tool" show
expect_exit 2 "$tool" show 0000000000000000000
grep -q "no entry" "$dir/err" || fail "show of a missing hash"
expect_exit 2 "$tool" prune
expect_exit 2 "$tool" prune --max-mb lots
expect_exit 2 "$tool" verify --json
expect_exit 2 "$tool" --dir "$dir/nowhere" list
grep -q "no cache directory" "$dir/err" || fail "missing dir message"
expect_exit 2 "$tool" --dir
expect_exit 2 env LAZYFUSE_CACHE_DIR=off "$tool" list
expect_exit 2 "$tool"
for c in list show stats verify prune clear; do
  expect_exit 0 "$tool" "$c" --help
  grep -q "usage: lazyfuse-cache $c" "$dir/out" || fail "$c --help"
done
expect_exit 0 "$tool" --help

# Prune: old entries, then down to a size.
expect_exit 0 "$tool" prune --older-than 1
[ "$(ls "$dir/cache"/*.lfk | wc -l)" -eq 3 ] || fail "nothing is a day old"
touch -d '3 days ago' "$entry"
expect_exit 0 "$tool" prune --older-than 2
[ "$(ls "$dir/cache"/*.lfk | wc -l)" -eq 2 ] || fail "prune --older-than removes the old entry"
expect_exit 0 "$tool" prune --max-mb 0
[ -z "$(ls "$dir/cache"/*.lfk 2>/dev/null)" ] || fail "prune --max-mb 0 empties it"

out=$("$filler") || fail "filler failed"
expect_exit 0 "$tool" clear
grep -q "removed 3 entries" "$dir/out" || fail "clear"
[ -z "$(ls "$dir/cache")" ] || fail "clear leaves nothing"
echo "lazyfuse-cache tool: ok"
