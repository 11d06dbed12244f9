#!/usr/bin/env bash
# libFuzzer targets for mtls's parsers (see Fuzz/README.md).
#
#   scripts/fuzz.sh --list                 name the targets, one a line
#   scripts/fuzz.sh --build                build every target (done on demand by the others)
#   scripts/fuzz.sh TARGET SECONDS [ARGS]  fuzz one target; extra ARGS go to libFuzzer
#   scripts/fuzz.sh --smoke [SECONDS]      every target for SECONDS (default 30): the CI smoke
#   scripts/fuzz.sh --all SECONDS          every target for SECONDS, one after the other
#   scripts/fuzz.sh --regress              run every saved finding (Fuzz/regressions/TARGET/*) once
#   scripts/fuzz.sh --report               a Markdown table of each target's latest run
#
# Each target is a small executable built with `swiftc -sanitize=fuzzer,address`: the package's
# modules (MTLSTrust, MTLSHTTP, MTLSTestServer, MTLSCommandLine) are compiled from Sources/ with the same
# instrumentation into static libraries, and Fuzz/Targets/TARGET.swift links against them.
# Seeds come from TestCerts/ and Fuzz/seeds/TARGET/; the corpus grows in $FUZZ_WORK/corpus/TARGET
# across runs. A crash, leak, timeout (> 10 s per input) or out-of-memory (> 2 GB) fails the run
# and leaves the input in $FUZZ_WORK/artifacts/TARGET/; copy it to Fuzz/regressions/TARGET/ with
# the fix so that --regress keeps it fixed.
#
# Environment: FUZZ_WORK (default /tmp/mtls-fuzz), FUZZ_JOBS (parallel workers per target,
# default 1), SWIFTC (default swiftc), FUZZ_OPT (default -O).
set -euo pipefail
# Swift's own crash backtracer fights AddressSanitizer's handler; let libFuzzer and ASan report.
export SWIFT_BACKTRACE=enable=no

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${FUZZ_WORK:-/tmp/mtls-fuzz}
BUILD=$WORK/build
SWIFTC=${SWIFTC:-swiftc}
OPT=${FUZZ_OPT:--O}
JOBS=${FUZZ_JOBS:-1}

# TARGET -> the seed directories and files (relative to the repository) it starts from.
declare -A SEEDS=(
    [certificate-pem]="TestCerts/*.pem TestCerts/bad/* TestCerts/keys/backup.csr"
    [certificate-der]="TestCerts/*.der TestCerts/*.cer TestCerts/bad/*"
    [certificate-loader]="TestCerts/*.pem TestCerts/*.der TestCerts/p12/certs-only.p12 TestCerts/bad/* Fuzz/seeds/certificate-loader/*"
    [private-key]="TestCerts/*.key TestCerts/keys/* TestCerts/bad/*"
    [pkcs12]="TestCerts/p12/* TestCerts/bad/*.p12 TestCerts/third-party/pkcs12/*/*.p12 Fuzz/seeds/pkcs12/*"
    [pkcs12-nopass]="TestCerts/p12/* TestCerts/bad/*.p12 TestCerts/third-party/pkcs12/*/*.p12 Fuzz/seeds/pkcs12/*"
    [der-spki]="TestCerts/*.der TestCerts/*.cer TestCerts/keys/*.der"
    [http-response]="Fuzz/seeds/http-response/*"
    [chunked]="Fuzz/seeds/chunked/*"
    [http-request]="Fuzz/seeds/http-request/*"
    [decompressor]="Fuzz/seeds/decompressor/*"
    [url]="Fuzz/seeds/url/*"
    [cookie]="Fuzz/seeds/cookie/*"
    [www-authenticate]="Fuzz/seeds/www-authenticate/*"
    [ntlm-challenge]="Fuzz/seeds/ntlm-challenge/*"
    [html-form]="Fuzz/seeds/html-form/*"
    [cli-arguments]="Fuzz/seeds/cli-arguments/*"
    [pin-document]="Fuzz/seeds/pin-document/*"
    [trust-fast-path]="TestCerts/*.der Fuzz/seeds/trust-fast-path/*"
    [display-text]="Fuzz/seeds/display-text/*"
    [revocation-data]="Fuzz/seeds/revocation-data/*"
)
TARGETS=(certificate-pem certificate-der certificate-loader private-key pkcs12 pkcs12-nopass der-spki
    http-response chunked http-request decompressor url cookie www-authenticate ntlm-challenge html-form cli-arguments
    pin-document trust-fast-path display-text revocation-data)

die() { echo "fuzz.sh: $*" >&2; exit 2; }

known() { local t; for t in "${TARGETS[@]}"; do [[ $t == "$1" ]] && return 0; done; return 1; }

# The sources of a module: every .swift under Sources/MODULE.
sources() { find "$ROOT/Sources/$1" -name '*.swift' | sort; }

# True when FILE is missing or older than any file under the given directories.
stale() {
    local file=$1
    shift
    [[ ! -f $file ]] && return 0
    [[ -n $(find "$@" -type f -newer "$file" 2>/dev/null | head -1) ]]
}

build() {
    mkdir -p "$BUILD/shims" "$BUILD/xml"
    local cc
    cc=$(dirname "$(command -v "$SWIFTC")")/clang
    [[ -x $cc ]] || cc=clang
    if stale "$BUILD/libCOpenSSLShims.a" "$ROOT/Sources/COpenSSLShims"; then
        echo "== building fuzz targets in $BUILD" >&2
        # The C shims (macro forwarders, the wiping allocator, the output cleanup on signals),
        # instrumented like the rest.
        "$cc" -c -O1 -g -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/COpenSSLShims/include" \
            "$ROOT/Sources/COpenSSLShims/shims.c" -o "$BUILD/shims.o"
        "$cc" -c -O1 -g -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/COpenSSLShims/include" \
            "$ROOT/Sources/COpenSSLShims/wiping_allocator.c" -o "$BUILD/wiping_allocator.o"
        "$cc" -c -O1 -g -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/COpenSSLShims/include" \
            "$ROOT/Sources/COpenSSLShims/cleanup.c" -o "$BUILD/cleanup.o"
        rm -f "$BUILD/libCOpenSSLShims.a"
        ar rcs "$BUILD/libCOpenSSLShims.a" "$BUILD/shims.o" "$BUILD/wiping_allocator.o" "$BUILD/cleanup.o"
    fi
    if stale "$BUILD/libCLibXML2.a" "$ROOT/Sources/CLibXML2"; then
        # The libxml2 loader (dlopen on first use).
        "$cc" -c -O1 -g -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/CLibXML2/include" \
            "$ROOT/Sources/CLibXML2/loader.c" -o "$BUILD/xml.o"
        ar rcs "$BUILD/libCLibXML2.a" "$BUILD/xml.o"
    fi
    if stale "$BUILD/libCGSSAPI.a" "$ROOT/Sources/CGSSAPI"; then
        # The GSSAPI loader (dlopen of libgssapi_krb5 on first use).
        "$cc" -c -O1 -g -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/CGSSAPI/include" \
            "$ROOT/Sources/CGSSAPI/gssapi.c" -o "$BUILD/gssapi.o"
        rm -f "$BUILD/libCGSSAPI.a"
        ar rcs "$BUILD/libCGSSAPI.a" "$BUILD/gssapi.o"
    fi
    mkdir -p "$BUILD/gssapi"
    cat >"$BUILD/gssapi/module.modulemap" <<EOF
module CGSSAPI {
    header "$ROOT/Sources/CGSSAPI/include/CGSSAPI.h"
    link "CGSSAPI"
    export *
}
EOF
    cat >"$BUILD/xml/module.modulemap" <<EOF
module CLibXML2 {
    header "$ROOT/Sources/CLibXML2/include/CLibXML2.h"
    link "CLibXML2"
    export *
}
EOF
    cat >"$BUILD/shims/module.modulemap" <<EOF
module COpenSSLShims {
    header "$ROOT/Sources/COpenSSLShims/include/COpenSSLShims.h"
    link "COpenSSLShims"
    export *
}
EOF
    local common=(-sanitize=fuzzer,address -parse-as-library -package-name mtls -enable-testing "$OPT" -g
        -swift-version 6 -I "$BUILD" -I "$BUILD/shims" -I "$BUILD/xml" -I "$BUILD/gssapi"
        -Xcc -fmodule-map-file="$ROOT/Sources/COpenSSL/module.modulemap"
        -Xcc -fmodule-map-file="$ROOT/Sources/CZlib/module.modulemap")
    local module dirty=0 dependencies=("$ROOT/Sources/COpenSSLShims" "$ROOT/Sources/COpenSSL" "$ROOT/Sources/CLibXML2" "$ROOT/Sources/CGSSAPI")
    for module in MTLSTrust MTLSHTTP MTLSTestServer MTLSCommandLine; do
        dependencies+=("$ROOT/Sources/$module")
        if [[ $dirty -eq 1 ]] || stale "$BUILD/lib$module.a" "${dependencies[@]}"; then
            dirty=1
            echo "   $module" >&2
            # A new archive, not one added to: the objects of a source file since removed or
            # renamed would stay in it and define its symbols twice.
            rm -f "$BUILD/lib$module.a"
            # shellcheck disable=SC2046
            "$SWIFTC" "${common[@]}" -module-name "$module" -emit-module -emit-module-path "$BUILD/$module.swiftmodule" \
                -emit-library -static -o "$BUILD/lib$module.a" $(sources "$module")
        fi
    done
    local target
    for target in "${TARGETS[@]}"; do
        if [[ $dirty -eq 1 ]] || stale "$BUILD/fuzz-$target" "$ROOT/Fuzz/Targets/$target.swift" "$ROOT/Fuzz/Support"; then
            echo "   fuzz-$target" >&2
            "$SWIFTC" "${common[@]}" -module-name "Fuzz_${target//-/_}" "$ROOT/Fuzz/Targets/$target.swift" "$ROOT"/Fuzz/Support/*.swift \
                -L "$BUILD" -lMTLSCommandLine -lMTLSTestServer -lMTLSHTTP -lMTLSTrust -lCOpenSSLShims -lCLibXML2 -lCGSSAPI -lssl -lcrypto -lz \
                -o "$BUILD/fuzz-$target" 2>&1 | { grep -v "Cannot export local symbol" || true; } >&2
            [[ ${PIPESTATUS[0]} -eq 0 ]] || die "building fuzz-$target failed"
        fi
    done
}

# Copies the seeds of TARGET into a fresh seed directory (inputs larger than 1 MB are left out).
seeds() {
    local target=$1 dir=$WORK/seeds/$1 pattern file
    rm -rf "$dir"
    mkdir -p "$dir"
    for pattern in ${SEEDS[$target]}; do
        for file in $ROOT/$pattern; do
            [[ -f $file && $(stat -c %s "$file") -le 1048576 ]] && cp "$file" "$dir/$(echo "${file#"$ROOT"/}" | tr / _)"
        done
    done
    echo "$dir"
}

run() {
    local target=$1 seconds=$2
    shift 2
    known "$target" || die "unknown target '$target' (see --list)"
    [[ $seconds =~ ^[0-9]+$ ]] || die "SECONDS must be a whole number, not '$seconds'"
    build
    local corpus=$WORK/corpus/$target artifacts=$WORK/artifacts/$target seed dict=()
    mkdir -p "$corpus" "$artifacts"
    seed=$(seeds "$target")
    [[ -f $ROOT/Fuzz/dictionaries/$target.dict ]] && dict=(-dict="$ROOT/Fuzz/dictionaries/$target.dict")
    echo "== $target for ${seconds}s (corpus $corpus)" >&2
    local log=$WORK/logs/$target.$(date +%Y%m%dT%H%M%S).log
    mkdir -p "$WORK/logs"
    echo "# fuzz.sh $target $seconds started $(date -u +%Y-%m-%dT%H:%M:%SZ) jobs $JOBS commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')" >"$log"
    local status=0 parallel=() deadline=$((SECONDS + seconds)) left known=0 unit attempt
    # -fork runs JOBS workers that share the corpus and honour -max_total_time.
    [[ $JOBS -gt 1 ]] && parallel=(-fork="$JOBS" -ignore_crashes=0)
    while left=$((deadline - SECONDS)); ((left > 0)); do
        status=0
        attempt=$(($(wc -c <"$log") + 1))  # where this attempt's output starts in the log
        # detect_leaks: LeakSanitizer runs at exit and on each new input that grows coverage; leaks
        # of the toolchain's own libraries are suppressed by name (Fuzz/lsan-suppressions.txt).
        LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/Fuzz/lsan-suppressions.txt} \
        ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
            "$BUILD/fuzz-$target" "$corpus" "$seed" -max_total_time="$left" -timeout=10 -rss_limit_mb=2048 \
            -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" "${parallel[@]}" \
            "${dict[@]}" "$@" >>"$log" 2>&1 || status=$?
        [[ $status -eq 0 ]] && break
        # A leak found with fast unwinding stops at the first frame without a frame pointer
        # (libcrypto has none), where no suppression can name OpenSSL's own leak. Replayed with
        # full stacks, a leak that a suppression then matches is that known one: keep the input
        # aside and fuzz on for the time left. Any other finding stops the run.
        unit=$(tail -c +"$attempt" "$log" | grep -o 'Test unit written to [^ ]*' | tail -1 | cut -d' ' -f5 || true)
        grep -q 'ERROR: LeakSanitizer' <(tail -c +"$attempt" "$log") && [[ -f $unit ]] && known_leak "$target" "$unit" || break
        mv "$unit" "$artifacts/known-${unit##*/}"
        known=$((known + 1))
        echo "# ${unit##*/}: a known leak (a suppression matches it with full stacks); fuzzing on" >>"$log"
    done
    ((known > 0)) && echo "   $target: $known input(s) met a suppressed leak (replayed with full stacks; kept as $artifacts/known-*)" >&2
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|^#[0-9]+.*DONE|cov: ' "$log" | tail -4 >&2 || true
    if [[ $status -ne 0 ]]; then
        echo "!! $target failed (status $status); log: $log; artifacts: $artifacts" >&2
        grep -E 'ERROR: |SUMMARY: |Test unit written|Fatal error|fatal error' "$log" | head -10 >&2 || true
        return 1
    fi
    echo "ok $target ${seconds}s, log: $log" >&2
}

# Full stacks for a replay: a suppression of a leak inside libcrypto (no frame pointers) can match
# only a stack unwound past it, which fuzzing at full speed does not record.
FULL_STACKS=detect_leaks=1:fast_unwind_on_malloc=0

# True when `unit`, run once by `target` with full stacks, ends clean and a suppression was used:
# its leak is one Fuzz/lsan-suppressions.txt names (OpenSSL's policy-cache leak, so far).
known_leak() {
    local out
    out=$(LSAN_OPTIONS=suppressions=$ROOT/Fuzz/lsan-suppressions.txt:print_suppressions=1 ASAN_OPTIONS=$FULL_STACKS \
        "$BUILD/fuzz-$1" -timeout=10 -rss_limit_mb=2048 "$2" 2>&1) && grep -q 'Suppressions used' <<<"$out"
}

regress() {
    build
    local target file failures=0
    for target in "${TARGETS[@]}"; do
        [[ -d $ROOT/Fuzz/regressions/$target ]] || continue
        for file in "$ROOT/Fuzz/regressions/$target"/*; do
            [[ -f $file ]] || continue
            if LSAN_OPTIONS=suppressions=$ROOT/Fuzz/lsan-suppressions.txt ASAN_OPTIONS=$FULL_STACKS "$BUILD/fuzz-$target" -timeout=10 -rss_limit_mb=2048 "$file" >"$WORK/regress.log" 2>&1; then
                echo "ok   $target $(basename "$file")"
            else
                echo "FAIL $target $(basename "$file")"
                tail -20 "$WORK/regress.log"
                failures=$((failures + 1))
            fi
        done
    done
    [[ $failures -eq 0 ]]
}

# A Markdown table of the latest log of each target (the figures in docs/RELIABILITY.md).
report() {
    local target log seconds units rate cov ft corpus rss
    echo "| target | seconds | executions | exec/s | edges (cov) | features (ft) | corpus | peak RSS MB | result |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
    for target in "${TARGETS[@]}"; do
        log=$(ls -t "$WORK/logs/$target".*.log 2>/dev/null | head -1)
        [[ -n $log ]] || { echo "| \`$target\` | – | – | – | – | – | – | – | not run |"; continue; }
        seconds=$(head -1 "$log" | awk '$2 == "fuzz.sh" {print $4}' || true)
        units=$(grep -E '^stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}' || true)
        rate=$(grep -E '^stat::average_exec_per_sec' "$log" | tail -1 | awk '{print $2}' || true)
        rss=$(grep -E '^stat::peak_rss_mb' "$log" | tail -1 | awk '{print $2}' || true)
        cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
        ft=$(grep -Eo 'ft: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
        corpus=$(grep -Eo 'corp: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
        [[ -z $seconds && -n $units && -n $rate && $rate -gt 0 ]] && seconds="~$((units / rate))"
        local result="clean"
        grep -qE '^==[0-9]+==ERROR|^SUMMARY: |Test unit written' "$log" && result="**finding**"
        echo "| \`$target\` | ${seconds:-?} | ${units:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | ${corpus:-?} | ${rss:-?} | $result |"
    done
}

case ${1:-} in
--list) printf '%s\n' "${TARGETS[@]}" ;;
--report) report ;;
--build) build ;;
--smoke | --all)
    mode=$1
    seconds=${2:-30}
    [[ $mode == --all && -z ${2:-} ]] && die "--all needs SECONDS"
    failed=()
    for target in "${TARGETS[@]}"; do run "$target" "$seconds" || failed+=("$target"); done
    regress || failed+=(regressions)
    if [[ ${#failed[@]} -gt 0 ]]; then die "failed: ${failed[*]}"; fi
    ;;
--regress) regress ;;
"" | -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' ;;
-*) die "unknown option '$1' (see --help)" ;;
*)
    [[ $# -ge 2 ]] || die "usage: scripts/fuzz.sh TARGET SECONDS"
    run "$@"
    ;;
esac
