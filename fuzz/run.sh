#!/bin/sh
# Run ferry's cargo-fuzz targets with a corpus seeded from the catalog test
# corpus (and Debian's Puppet modules when installed).
#
#   fuzz/run.sh [SECONDS] [TARGET...]     defaults: 300 seconds, parse compile template
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# Crashes land in fuzz/artifacts/TARGET/; replay one with
#   cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-...
set -eu
cd "$(dirname "$0")/.."
secs=${1:-300}
[ $# -gt 0 ] && shift
targets=${*:-parse compile template}
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
for t in $targets; do
    mkdir -p "fuzz/corpus/$t"
    case $t in
        template) seeds="$(find tests/catalog -name '*.erb' -o -name '*.epp')
            $(find -L /usr/share/puppet/modules -name '*.erb' -o -name '*.epp' 2>/dev/null | head -300)" ;;
        *) seeds="$(find tests/catalog -name '*.pp')
            $(find -L /usr/share/puppet/modules -name '*.pp' 2>/dev/null | head -300)" ;;
    esac
    for f in $seeds; do
        cp -n "$f" "fuzz/corpus/$t/$(printf '%s' "$f" | tr '/' '_')" 2>/dev/null || true
    done
    cargo +nightly fuzz run "$t" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -max_len=16384 \
        -print_final_stats=1
done
