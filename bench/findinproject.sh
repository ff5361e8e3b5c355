#!/usr/bin/env bash
# Benchmark findInProject (through the builtin plugin, started by the host's
# plugin manager) against ripgrep on the Go distribution's source tree, and
# check that both return the same matches (path:line).
#
#   bench/findinproject.sh [RUNS]      (default 5 timed runs per query)
#
# Env: ROOT (tree to search, default $(go env GOROOT)/src), TARGET (largest
# allowed time ratio plugin/rg, default 1.3), RG (ripgrep binary, default rg;
# Debian: apt-get install ripgrep), JOBS (rg's threads, default nproc: the
# plugin's GOMAXPROCS).
#
# Exits non-zero when the matches differ or a ratio exceeds TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-5}
ROOT=${ROOT:-$(go env GOROOT)/src}
TARGET=${TARGET:-1.3}
RG=${RG:-rg}
JOBS=${JOBS:-$(nproc)}
unset RIPGREP_CONFIG_PATH

command -v "$RG" >/dev/null || { echo "ripgrep ($RG) not found: apt-get install ripgrep" >&2; exit 2; }
[ -d "$ROOT" ] || { echo "no tree at $ROOT" >&2; exit 2; }
ROOT=$(cd "$ROOT" && pwd -P)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "building opair-plugin-builtin and the driver..."
go build -o "$tmp/opair-plugin-builtin" ./plugins/builtin/opair-plugin-builtin
go build -o "$tmp/findbench" ./bench/findbench

# rg with findInProject's semantics: no config file; dot paths, symbolic
# links and binary files (a NUL byte, no UTF-16 transcoding) skipped;
# .gitignore files at every level of the tree honoured whether or not it is
# a git repository, plus .git/info/exclude and the global excludes file,
# but no .ignore/.rgignore files and nothing above the root. -j: as many
# threads as the plugin's GOMAXPROCS (-j2 on a 2-core machine).
RGFLAGS=(--no-config --no-heading --line-number --color never -j "$JOBS"
	--no-require-git --no-ignore-parent --no-ignore-dot --encoding none)

# kind|plugin pattern|rg pattern (Go's \w is ASCII: (?-u:\w) for rg)
QUERIES=(
	'literal|func|func'
	'literal|ErrUnexpectedEOF|ErrUnexpectedEOF'
	'literal|return nil|return nil'
	'regex|func \w+\(|func (?-u:\w)+\('
	'regex|[A-Z][a-z]+Error|[A-Z][a-z]+Error'
	'regex|^import \(|^import \('
	'ci-literal|deadline exceeded|deadline exceeded'
)

echo "tree: $ROOT ($(find "$ROOT" -type f | wc -l) files), $RUNS runs per query, median; $(nproc) cores, rg -j $JOBS; $("$RG" --version | sed -n 1p)"
printf '%-12s %-22s %9s %9s %9s %7s  %s\n' kind pattern matches plugin_s rg_s ratio result
fail=0
i=0
for q in "${QUERIES[@]}"; do
	IFS='|' read -r kind pat rgpat <<<"$q"
	i=$((i + 1))
	popt=() ropt=()
	case $kind in
	literal) popt=(-literal) ropt=(--fixed-strings) ;;
	ci-literal) popt=(-literal -i) ropt=(--fixed-strings --ignore-case) ;;
	regex) ;;
	esac
	times=$("$tmp/findbench" -plugin "$tmp/opair-plugin-builtin" -root "$ROOT" -runs "$RUNS" \
		-pout "$tmp/p$i" -cout "$tmp/r$i" "${popt[@]}" -pattern "$pat" -- "$RG" "${RGFLAGS[@]}" "${ropt[@]}" -e "$rgpat")
	read -r pt rt <<<"$times"
	LC_ALL=C sort -o "$tmp/p$i" "$tmp/p$i"
	LC_ALL=C sort -o "$tmp/r$i" "$tmp/r$i"
	n=$(wc -l <"$tmp/r$i")
	ratio=$(awk -v p="$pt" -v r="$rt" 'BEGIN { printf "%.2f", p / r }')
	result=ok
	if ! cmp -s "$tmp/p$i" "$tmp/r$i"; then
		result="MISMATCH"
		fail=1
	elif awk -v x="$ratio" -v t="$TARGET" 'BEGIN { exit !(x > t) }'; then
		result="SLOW"
		fail=1
	fi
	printf '%-12s %-22s %9d %9.3f %9.3f %7s  %s\n' "$kind" "$pat" "$n" "$pt" "$rt" "$ratio" "$result"
	if [ "$result" = MISMATCH ]; then
		echo "!!! MISMATCH for $kind '$pat': findInProject $(wc -l <"$tmp/p$i") matches, rg $n; < findInProject only, > rg only (path:line):" >&2
		diff "$tmp/p$i" "$tmp/r$i" | head -40 >&2 || true
	fi
done
echo "target: findInProject no slower than $TARGET x rg, identical matches"
if [ $fail -ne 0 ]; then
	echo "FAIL: a query is over the target or its matches differ" >&2
	exit 1
fi
echo PASS
