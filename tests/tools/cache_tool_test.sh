#!/usr/bin/env bash
# Drives lazyfuse-cache as a user would: run a program that fills a temporary cache, list, show,
# stats (with the hit rates the runs recorded), hits per entry and --sort=hits, verify; corrupt an
# entry and a hit count and verify again (must fail); bad arguments; ambiguous prefixes; prune
# (--max-mb 0 only with --yes); clear; list --json says why as the text listing does.
set -u
tool=$1
filler=$2
demo=${3:-}
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
[ "$(grep -c " 1 hits " "$dir/out")" -eq 3 ] || { cat "$dir/out"; fail "list: each entry loaded once (the second run)"; }
expect_exit 0 "$tool" list --sort=size --json
grep -q '"summary"' "$dir/out" || fail "list --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==3 and all(e["ok"] and e["hits"]==1 for e in d)' "$dir/out" \
  || fail "list --json is not the expected JSON"
# The JSON's "why" is the text listing's phrase (it was "" for a kernel whose ops were new).
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert all(e["why"]=="the first kernel of its ops in the run that compiled it" for e in d), d' "$dir/out" \
  || fail "list --json: why"
expect_exit 0 "$tool" list
[ "$(grep -c " the first kernel of its ops in the run that compiled it$" "$dir/out")" -eq 3 ] || { cat "$dir/out"; fail "list: why"; }
# A prefix of several entries is ambiguous, and says so (lf_ alone was "expected a hash").
for p in lf_ ""; do
  expect_exit 2 "$tool" show "$p"
  grep -q "'$p' is ambiguous: matches 3 entries" "$dir/err" || { cat "$dir/err"; fail "show '$p': ambiguous"; }
done
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
grep -q "3 hits" "$dir/out" || { cat "$dir/out"; fail "stats: entry hits"; }
# The two runs recorded: 2 runs, 3 kernels compiled by the first, 3 loaded by the second.
grep -q "cpu: 2 runs, 3 loaded, 3 compiled: hit rate 50.0%" "$dir/out" || { cat "$dir/out"; fail "stats: hit rate"; }
expect_exit 0 "$tool" stats --json
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["entries"]==3 and d["hits"]==3, d
p=d["programs"]
assert p["loaded"]==3 and p["compiled"]==3 and p["hit_rate"]==0.5, p
assert p["backends"]==[{"backend":"cpu","runs":2,"loaded":3,"compiled":3,"hit_rate":0.5}], p' "$dir/out" || fail "stats --json"
expect_exit 0 "$tool" verify

# --sort=hits puts the least loaded entry last: one entry loses its count, a third run loads all.
expect_exit 0 "$tool" list --sort=name
idle=$(head -1 "$dir/out" | cut -d' ' -f1)
rm "$dir/cache/${idle#lf_}"*.hits
out=$("$filler") || fail "filler failed: $out"
expect_exit 0 "$tool" list --sort=hits
tail -1 "$dir/out" | grep -q "^$idle .* 1 hits " || { cat "$dir/out"; fail "list --sort=hits: $idle last"; }
[ "$(grep -c " 2 hits " "$dir/out")" -eq 2 ] || { cat "$dir/out"; fail "list --sort=hits: two entries loaded twice"; }
expect_exit 0 "$tool" show "$idle"
grep -q "^hits:  *1 " "$dir/out" || fail "show prints the hits"

# Corrupt one entry and another's hit count: verify fails and names them; list marks the entry
# BAD; a run replaces the entry and rewrites the count.
entry=$(ls "$dir/cache"/*.lfk | head -1)
counted=$(ls "$dir/cache"/*.lfk | tail -1)
printf 'lots' >"${counted%.lfk}.hits"
expect_exit 1 "$tool" verify
grep -q "BAD .*hits: not a hit count" "$dir/out" || { cat "$dir/out"; fail "verify names the bad hit count"; }
printf '\xff' | dd of="$entry" bs=1 seek=100 conv=notrunc status=none
expect_exit 1 "$tool" verify
grep -q "BAD .*checksum" "$dir/out" || fail "verify names the bad entry"
expect_exit 0 "$tool" list
grep -q "BAD" "$dir/out" || fail "list marks the bad entry"
out=$("$filler" 2>"$dir/err") || fail "filler with a corrupt entry"
[ "$out" = "compiled=1 disk_hits=2" ] || fail "corrupt entry recompiled: $out"
grep -q "unusable" "$dir/err" || fail "corrupt entry reported"
expect_exit 0 "$tool" verify
expect_exit 0 "$tool" show "$(basename "${counted%.lfk}")"
grep -q "^hits:  *1 " "$dir/out" || { cat "$dir/out"; fail "a bad hit count starts again"; }
expect_exit 0 "$tool" stats
grep -q "cpu: 4 runs, 8 loaded, 4 compiled: hit rate 66.7%" "$dir/out" || { cat "$dir/out"; fail "stats after four runs"; }
expect_exit 0 "$tool" verify

# Special files named like cache files (issue 25): a FIFO, symlinks to devices, a dangling
# symlink, an empty file. Nothing hangs or reads without bound (timeout 60: 124 fails the
# expected exit status); verify names each as BAD; a program that looks the kernel up through a
# FIFO or a symlink recompiles it and replaces the special file.
t() { timeout 60 "$@"; }
real=$(ls "$dir/cache"/*.lfk | head -1)
real_hits=$(ls "$dir/cache"/*.lfk | tail -1)
rm -f "$real" "${real_hits%.lfk}.hits"
mkfifo "$real"
mkfifo "${real_hits%.lfk}.hits"
ln -s /dev/zero "$dir/cache/00000000000000aa.lfk"
ln -s /dev/urandom "$dir/cache/00000000000000bb.lfk"
ln -s "$dir/cache/nothing-here" "$dir/cache/00000000000000cc.lfk"
: >"$dir/cache/00000000000000dd.lfk"
ln -s /dev/zero "$dir/cache/00000000000000ee.hits"
expect_exit 1 t "$tool" verify
grep -q "BAD $real: not a regular file" "$dir/out" || { cat "$dir/out"; fail "verify: the FIFO entry"; }
grep -q "BAD ${real_hits%.lfk}.hits" "$dir/out" || { cat "$dir/out"; fail "verify: the FIFO hit count"; }
grep -q "BAD .*00000000000000aa.lfk: a symbolic link (to /dev/zero)" "$dir/out" || { cat "$dir/out"; fail "verify: symlink to /dev/zero"; }
grep -q "BAD .*00000000000000bb.lfk: a symbolic link" "$dir/out" || fail "verify: symlink to /dev/urandom"
grep -q "BAD .*00000000000000cc.lfk: a symbolic link" "$dir/out" || { cat "$dir/out"; fail "verify: a dangling symlink is not skipped"; }
grep -q "BAD .*00000000000000dd.lfk: not a LazyFuse cache entry" "$dir/out" || { cat "$dir/out"; fail "verify: empty entry"; }
grep -q "BAD .*00000000000000ee.hits" "$dir/out" || { cat "$dir/out"; fail "verify: hit count that is a symlink"; }
grep -q "7 entries, 5 bad" "$dir/out" || { cat "$dir/out"; fail "verify: counts"; }
expect_exit 0 t "$tool" list
[ "$(grep -c "BAD" "$dir/out")" -eq 5 ] || { cat "$dir/out"; fail "list: five BAD entries"; }
expect_exit 0 t "$tool" list --json
expect_exit 0 t "$tool" stats
out=$(t "$filler" 2>"$dir/err") || fail "filler with a FIFO entry: $out $(cat "$dir/err")"
[ "$out" = "compiled=1 disk_hits=2" ] || fail "the FIFO entry is recompiled: $out"
[ -f "$real" ] && [ ! -p "$real" ] || fail "the FIFO entry was replaced by a regular file"
[ -f "${real_hits%.lfk}.hits" ] || fail "the FIFO hit count was replaced by a regular file"
[ -c /dev/zero ] || fail "/dev/zero is untouched"
expect_exit 0 t "$tool" show "$(basename "${real_hits%.lfk}")"
grep -q "^hits:  *1 " "$dir/out" || { cat "$dir/out"; fail "the replaced hit count counts again"; }
# Out-of-range numbers are refused before anything is removed (1e15 days once overflowed into
# "older than everything").
for n in 1e15 1e20 1e999 inf nan -1 1e300; do
  expect_exit 2 "$tool" prune --older-than "$n"
  grep -q "older-than" "$dir/err" || fail "--older-than $n message"
done
for n in 1e300 inf 1e13 -0.5; do
  expect_exit 2 "$tool" prune --max-mb "$n"
done
[ "$(ls "$dir/cache"/*.lfk | wc -l)" -eq 7 ] || fail "refused prunes removed nothing"
expect_exit 0 "$tool" prune --older-than 10000
[ "$(ls "$dir/cache"/*.lfk | wc -l)" -eq 3 ] || { ls -l "$dir/cache"; fail "prune removes the four bad entries, keeps the good ones"; }
[ ! -e "$dir/cache/00000000000000ee.hits" ] && [ ! -L "$dir/cache/00000000000000ee.hits" ] || fail "prune removes the stray hit count"
expect_exit 0 "$tool" verify

# Errors: clear messages and non-zero exits, never a crash.
expect_exit 2 "$tool" frobnicate
grep -q "unknown command" "$dir/err" || fail "unknown command message"
expect_exit 2 "$tool" list --sort=colour
grep -q "expected use, hits, size, time or name" "$dir/err" || fail "--sort message"
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
[ -f "${entry%.lfk}.hits" ] || fail "the old entry was loaded: it has a hit count"
expect_exit 0 "$tool" prune --older-than 2
[ "$(ls "$dir/cache"/*.lfk | wc -l)" -eq 2 ] || fail "prune --older-than removes the old entry"
[ ! -e "${entry%.lfk}.hits" ] || fail "prune removes the entry's hit count"
# --max-mb 0 removes everything: refused without --yes (it once emptied the cache silently).
for f in "--max-mb 0" "--max-mb=0" "--max-mb 0.0 --older-than 5"; do
  expect_exit 2 "$tool" prune $f
  grep -q -- "--max-mb 0 removes every entry; add --yes to confirm" "$dir/err" || { cat "$dir/err"; fail "prune $f: refused"; }
done
[ "$(ls "$dir/cache"/*.lfk | wc -l)" -eq 2 ] || fail "a refused --max-mb 0 removes nothing"
expect_exit 2 "$tool" list --yes
expect_exit 0 "$tool" prune --max-mb 1000 --yes
[ "$(ls "$dir/cache"/*.lfk | wc -l)" -eq 2 ] || fail "--yes with a size that fits removes nothing"
expect_exit 0 "$tool" prune --max-mb 0 --yes
[ -z "$(ls "$dir/cache"/*.lfk "$dir/cache"/*.hits 2>/dev/null)" ] || fail "prune --max-mb 0 --yes empties it"

out=$("$filler") || fail "filler failed"
expect_exit 0 "$tool" clear
grep -q "removed 3 entries" "$dir/out" || fail "clear"
[ -z "$(ls "$dir/cache")" ] || { ls "$dir/cache"; fail "clear leaves nothing (hit counts and the programs record too)"; }
expect_exit 0 "$tool" stats
grep -q "programs: none has recorded" "$dir/out" || fail "stats after clear"
# Names agree: the kernel name LAZYFUSE_LOG prints is what list prints and what show takes (whole,
# or lf_ and a prefix, or a bare hash prefix); show and list say why an entry was compiled.
if [ -n "$demo" ]; then
  export LAZYFUSE_CACHE_DIR="$dir/demo-cache"
  LAZYFUSE_LOG=1 "$demo" >"$dir/out" 2>"$dir/err" || { cat "$dir/err"; fail "demo"; }
  name=$(sed -n 's/.*compiled \(lf_[0-9a-f]*\): new: .*transposed.*/\1/p' "$dir/err")
  [ -n "$name" ] || { cat "$dir/err"; fail "the log names the recompiled kernel"; }
  first=$(sed -n 's/.*compiled \(lf_[0-9a-f]*\): the first kernel of these ops/\1/p' "$dir/err" | head -1)
  expect_exit 0 "$tool" show "$name"
  grep -q "^kernel:  *$name$" "$dir/out" || { cat "$dir/out"; fail "show $name: the kernel"; }
  grep -q "^why:  *new: .*input 1: transposed layout (was contiguous)" "$dir/out" || { cat "$dir/out"; fail "show: why"; }
  expect_exit 0 "$tool" show "${name:0:9}"
  grep -q "^kernel:  *$name$" "$dir/out" || fail "show lf_ and a prefix"
  expect_exit 0 "$tool" show "${name:3:6}"
  grep -q "^kernel:  *$name$" "$dir/out" || fail "show a hash prefix"
  expect_exit 0 "$tool" show "$first"
  grep -q "^why:  *the first kernel of its ops" "$dir/out" || { cat "$dir/out"; fail "show: a first kernel's why"; }
  expect_exit 0 "$tool" show "$name" --json
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "transposed" in d["why"] and d["name"]==sys.argv[2] and d["version"]==3' \
    "$dir/out" "$name" || fail "show --json: why"
  expect_exit 0 "$tool" list
  grep -q "^$name .*new: .*transposed layout" "$dir/out" || { cat "$dir/out"; fail "list: name and why"; }
  text_why=$(grep "^$name " "$dir/out" | sed 's/.*[0-9][0-9]:[0-9][0-9]  //')
  expect_exit 0 "$tool" list --json
  python3 -c '
import json,sys
d={e["name"]: e for e in json.load(open(sys.argv[1]))}
assert d[sys.argv[2]]["why"]==sys.argv[3], (d[sys.argv[2]]["why"], sys.argv[3])
assert all(e["why"] for e in d.values()), d' "$dir/out" "$name" "$text_why" || fail "list --json: the text listing's why"
  n=$(ls "$LAZYFUSE_CACHE_DIR"/*.lfk | wc -l)
  expect_exit 2 "$tool" show lf_
  grep -q "'lf_' is ambiguous: matches $n entries" "$dir/err" || { cat "$dir/err"; fail "show lf_: ambiguous"; }
fi
echo "lazyfuse-cache tool: ok"
