#!/usr/bin/env bash
# cpu-per-request.sh ROUNDS N LABEL=MTLS_BENCH... : perf stat user+sys time per kept-alive request, TLS 1.3 (nginx on
# 127.0.0.1:18443) and TLS 1.2 (:18444), the C client (C_HTTPS, built from scripts/bench/c_https.c) and each binary alternating.
R=$(git rev-parse --show-toplevel)  # the TestCerts of this checkout
rounds=$1 n=$2; shift 2
for round in $(seq 1 "$rounds"); do
  for port in 18443 18444; do
    for spec in C=${C_HTTPS:-./c_https} "$@"; do
      label=${spec%%=*} bin=${spec#*=}
      if [[ $label == C ]]; then cmd=("$bin" keepalive $port $R/TestCerts/root-ca.pem /small $n); else cmd=("$bin" https keepalive $port $R/TestCerts/root-ca.pem /small $n); fi
      out=$(perf stat -x, -e user_time,system_time "${cmd[@]}" 2>&1)
      rate=$(grep -o 'rate=[0-9.]*' <<<"$out" | cut -d= -f2)
      u=$(grep user_time <<<"$out" | cut -d, -f1); s=$(grep system_time <<<"$out" | cut -d, -f1)
      printf '%s round %d TLS%s %-6s rate %8s  user %5.1f us  sys %5.1f us  total %5.1f us/request  load %s\n' "$(date -u +%T)" "$round" "$([[ $port == 18443 ]] && echo 1.3 || echo 1.2)" "$label" "$rate" "$(bc -l <<<"$u/1000/$n")" "$(bc -l <<<"$s/1000/$n")" "$(bc -l <<<"($u+$s)/1000/$n")" "$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
