#!/bin/sh
# Fuzz ferry's inputs with cargo-fuzz on a stable toolchain (RUSTC_BOOTSTRAP=1
# lets stable rustc take the sanitizer flags cargo-fuzz passes).
#
#   fuzz/run.sh [CPU_SECONDS] [TARGET...]
#       build every target (unless FUZZ_NO_BUILD=1), seed empty corpora, then
#       run the targets one after another, each until its process has used
#       CPU_SECONDS of CPU time (user + system; default 300), under nice 19.
#       FUZZ_JOBS=2 runs two targets at a time (each still one process).
#   fuzz/run.sh seed [TARGET...]       only seed the corpora
#   fuzz/run.sh replay [TARGET...]     run every corpus and regression file once
#
# Targets (default: all, riskiest first): pql inventory plan api_body
# known_hosts ssh_config task_metadata task_output parse compile template.
# New inputs go to fuzz/corpus/TARGET, crashes to fuzz/artifacts/TARGET/,
# each run's log to ${FUZZ_LOG_DIR:-/tmp}/ferry-fuzz-TARGET.log.
# A crash found is minimised with
#   RUSTC_BOOTSTRAP=1 cargo fuzz tmin -a TARGET fuzz/artifacts/TARGET/crash-...
# and kept in fuzz/regressions/TARGET/ (tests/fuzz_corpus.rs replays it).
set -eu
cd "$(dirname "$0")"
ALL="pql inventory plan api_body known_hosts ssh_config task_metadata task_output parse compile template"
BIN=target/x86_64-unknown-linux-gnu/release
export RUSTC_BOOTSTRAP=1 CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"

# Seeds from the repository (and Debian's Puppet modules when installed).
seed() {
    t=$1
    dir=corpus/$t
    mkdir -p "$dir"
    [ -n "$(ls -A "$dir")" ] && return 0
    case $t in
        inventory) files=$(find ../tests/inventory ../inventory -name '*.yaml') ;;
        plan) files=$(find .. -path ../target -prune -o -path ./target -prune \
            -o -path '*/plans/*.yaml' -print) ;;
        task_metadata) files=$(find ../tests/tasks ../tasks -name '*.json') ;;
        parse | compile) files=$(find ../tests/catalog -name '*.pp'
            find -L /usr/share/puppet/modules -name '*.pp' 2>/dev/null | head -300) ;;
        template) files=$(find ../tests/catalog -name '*.erb' -o -name '*.epp'
            find -L /usr/share/puppet/modules -name '*.erb' -o -name '*.epp' 2>/dev/null | head -300) ;;
        *) files= ;;
    esac
    for f in $files; do
        cp "$f" "$dir/$(sha1sum <"$f" | cut -c1-40)"
    done
    python3 seeds/handwritten.py corpus "$t"
}

# Runs $1 until its process has used $2 CPU seconds, then stops it with
# SIGINT (libFuzzer prints its final stats and exits).
campaign() {
    t=$1 budget=$2
    log=${FUZZ_LOG_DIR:-/tmp}/ferry-fuzz-$t.log
    echo "=== $t: up to $budget CPU seconds, $(date -u +%FT%TZ)" >>"$log"
    mkdir -p "artifacts/$t"
    # Scratch files (and ssh_config's ~) in a directory of this run only.
    scratch=$(mktemp -d "${FUZZ_SCRATCH:-/dev/shm}/ferry-fuzz-$t.XXXXXX")
    cpu=0
    HOME=$scratch TMPDIR=$scratch nice -n 19 "$BIN/$t" "corpus/$t" -artifact_prefix="artifacts/$t/" \
        -timeout=10 -rss_limit_mb=4096 -max_len=16384 -print_final_stats=1 \
        >>"$log" 2>&1 &
    pid=$!
    tck=$(getconf CLK_TCK)
    while kill -0 "$pid" 2>/dev/null; do
        cpu=$(awk -v t="$tck" '{ print int(($14 + $15) / t) }' "/proc/$pid/stat" 2>/dev/null || echo 0)
        if [ "$cpu" -ge "$budget" ]; then
            kill -INT "$pid"
            break
        fi
        sleep 5
    done
    rc=0
    wait "$pid" || rc=$?
    # 72: libFuzzer's exit status when interrupted (-interrupted_exitcode).
    case $rc in
        0 | 72) ;;
        *) echo "$t: the fuzzer exited with $rc: a finding? see $log and artifacts/$t/" ;;
    esac
    rm -rf "$scratch"
    echo "$t: cpu=${cpu}s $(grep -E 'stat::number_of_executed_units|stat::new_units_added' "$log" |
        tail -n 2 | tr -s ' \n' ' ')corpus=$(ls "corpus/$t" | wc -l) $(date -u +%FT%TZ)" |
        tee -a "${FUZZ_LOG_DIR:-/tmp}/ferry-fuzz-summary.log"
}

mode=run
case ${1:-} in
    seed | replay) mode=$1; shift ;;
    _one) campaign "$2" "$3"; exit ;;
    [0-9]*) secs=$1; shift ;;
esac
targets=${*:-$ALL}
case $mode in
    seed) for t in $targets; do seed "$t"; done ;;
    replay)
        for t in $targets; do
            scratch=$(mktemp -d "${FUZZ_SCRATCH:-/dev/shm}/ferry-fuzz-$t.XXXXXX")
            HOME=$scratch TMPDIR=$scratch "$BIN/$t" -runs=0 "corpus/$t" \
                $(ls -d "regressions/$t" 2>/dev/null)
            rm -rf "$scratch"
        done ;;
    run)
        if [ "${FUZZ_NO_BUILD:-}" != 1 ]; then
            nice -n 19 cargo fuzz build -a
        fi
        for t in $targets; do seed "$t"; done
        printf '%s\n' $targets |
            xargs -P "${FUZZ_JOBS:-1}" -I{} sh ./run.sh _one {} "${secs:-300}" ;;
esac
