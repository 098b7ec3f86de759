#!/usr/bin/env bash
# Times the lab's core against inference-lab on the two peer workloads (README.md)
# as whole processes, interleaved run by run (after one warm-up of each, RUNS
# rounds of: ours with metrics, ours simulation only, inference-lab), and
# prints each run, the medians, and the medians of the round-by-round ratios
# inference-lab / ours. See README.md beside this file.
#
#   bash cmd/benchpeers/run.sh [RUNS]      (default 5; or: make bench-peers)
#
# Needs Go, Node.js with npm and GNU time (/usr/bin/time).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: RUNS = '$runs': want a whole number of at least 1" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "run.sh: /usr/bin/time (GNU time) not found: apt-get install time" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$here" && go build -o "$tmp/ours" ./ours)
(cd "$here/inference-lab" && npm ci --no-audit --no-fund --silent)

names=("ours" "ours, simulation only" "inference-lab 0.2.1")
# argv_of I WORKLOAD: sets argv to the I-th command of names on WORKLOAD.
argv_of() {
	case $1 in
	0) argv=("$tmp/ours" -workload "$2") ;;
	1) argv=("$tmp/ours" -workload "$2" -metrics=false) ;;
	2) argv=(node "$here/inference-lab/run.mjs" "$2") ;;
	esac
}
# once I WORKLOAD: one run, its output in $tmp/out and its figures in
# $tmp/time: wall s, user s, system s, peak memory KB.
once() { argv_of "$1" "$2"; /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "${argv[@]}" > "$tmp/out"; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for wl in all poisson; do
	echo
	echo "== workload $wl: 10,000 requests of 512 + 256 tokens, H100 / Llama-3.1-8B"
	for i in 0 1 2; do
		once $i $wl
		printf '%-22s %s\n' "${names[$i]}:" "$(cat "$tmp/out")"
	done
	: > "$tmp/rows"
	for ((r = 1; r <= runs; r++)); do
		row=""
		for i in 0 1 2; do
			once $i $wl
			read -r w u s m < "$tmp/time"
			row+="$w $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') $m "
		done
		echo "$row" >> "$tmp/rows"
	done
	awk -v n0="${names[0]}" -v n1="${names[1]}" -v n2="${names[2]}" '
		function median(a, n,   i, j, t) {  # sorts a[1..n] in place
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
		}
		{
			n++
			for (c = 0; c < 3; c++) { w[c, n] = $(3*c+1); cpu[c, n] = $(3*c+2); kb[c, n] = $(3*c+3) }
			printf "round %d: %.2f / %.2f / %.2f s wall, %.2f / %.2f / %.2f s CPU\n", n, $1, $4, $7, $2, $5, $8
		}
		END {
			name[0] = n0; name[1] = n1; name[2] = n2
			printf "median of %d rounds (wall clock, CPU time, peak memory):\n", n
			for (c = 0; c < 3; c++) {
				for (r = 1; r <= n; r++) { a[r] = w[c, r]; b[r] = cpu[c, r]; m[r] = kb[c, r] / 1024 }
				printf "  %-22s %.2f s, %.2f s, %.0f MB\n", name[c] ":", median(a, n), median(b, n), median(m, n)
			}
			for (c = 0; c < 2; c++) {
				for (r = 1; r <= n; r++) { a[r] = w[2, r] / w[c, r]; b[r] = (cpu[c, r] > 0 ? cpu[2, r] / cpu[c, r] : 0) }
				printf "ratio inference-lab / %s, median of the rounds: %.1fx wall, %.1fx CPU\n", name[c], median(a, n), median(b, n)
			}
		}' "$tmp/rows"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(GNU time counts in 10 ms steps: a run of a few hundredths of a second has a coarse ratio.)"
