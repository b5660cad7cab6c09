#!/bin/bash
# Per-packet cost of each queue discipline against drop-tail, in instructions (callgrind counts
# instructions, not seconds: the same on a loaded machine). Prints the instructions of one run
# per discipline and its ratio to drop-tail's, on the same scenario and binary.
#   scripts/bench_queues.sh [BINARY]       (default: builds the run_scenario example)
# Scenarios: 10 Reno flows, RTT 20-100 ms, 100 Mb/s, 2000-packet buffer, 20 s; and FQ-CoDel
# against drop-tail with 100 and 10,000 flows at 10 Gb/s for 2 s (O(1) per packet in flows).
set -euo pipefail
bin=${1:-}
if [ -z "$bin" ]; then
    cargo build -q --release --example run_scenario -p lossync-core
    bin=target/release/examples/run_scenario
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
scenario() {  # name capacity buffer flows duration warmup queue
    cat > "$dir/$1.toml" <<TOML
engine = "packet"
[dumbbell]
capacity = "$2"
buffer = { packets = $3 }
queue = $7
[[flows]]
count = $4
cc = "reno"
rtt = "20ms..100ms"
slow_start = true
[run]
duration = "$5"
warmup = "$6"
TOML
}
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$dir/$1.toml" 2>&1 >/dev/null |
        grep -o 'Collected : [0-9]*' | grep -o '[0-9]*$'
}
for name in droptail codel pie fq_codel dualpi2; do
    scenario "$name" 100Mbps 2000 10 20s 5s "{ discipline = \"$name\" }"
done
scenario red 100Mbps 2000 10 20s 5s '{ discipline = "red", min_th = 100, max_th = 1000 }'
base=$(instructions droptail)
printf '%-10s %15s %7s\n' discipline instructions ratio
for name in droptail red codel pie fq_codel dualpi2; do
    n=$(instructions "$name")
    printf '%-10s %15d %7.3f\n' "$name" "$n" "$(echo "$n / $base" | bc -l)"
done
for flows in 100 10000; do
    scenario "dt$flows" 10Gbps 20000 "$flows" 2s 1s '{ discipline = "droptail" }'
    scenario "fq$flows" 10Gbps 20000 "$flows" 2s 1s '{ discipline = "fq_codel" }'
    d=$(instructions "dt$flows"); f=$(instructions "fq$flows")
    printf 'fq_codel, %5d flows, 10 Gb/s: %15d (drop-tail %d, ratio %.3f)\n' "$flows" "$f" "$d" "$(echo "$f / $d" | bc -l)"
done
