#!/usr/bin/env bash
# alternate.sh ROUNDS N BIN... : alternating C and each mtls-bench binary on TLS1.3 (18443) and TLS1.2 (18444); median rate and task-clock µs/request
EC=/tmp/mtls-bench/ec; RSA=/tmp/mtls-bench/rsa; C=/tmp/mtls-bench/bin/c_https
rounds=$1 n=$2; shift 2
out=/tmp/karatio.$$; : > $out
for r in $(seq $rounds); do
  for port in 18443 18444; do
    ca=$EC/root.pem; [[ $port == 18444 ]] && ca=$RSA/root.pem
    for b in C "$@"; do
      if [[ $b == C ]]; then cmd=($C keepalive $port $ca /small $n); else cmd=($b https keepalive $port $ca /small $n); fi
      o=$(perf stat -x, -e task-clock "${cmd[@]}" 2>&1)
      rate=$(grep -o 'rate=[0-9.]*' <<<"$o" | cut -d= -f2); tc=$(grep task-clock <<<"$o" | cut -d, -f1)
      echo "$port $b $rate $(bc -l <<<"$tc*1000/$n")" >> $out
    done
  done
done
python3 - "$out" <<'PY'
import sys, statistics, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    p, b, r, t = l.split(); d[(p, b)].append((float(r), float(t)))
for (p, b), v in sorted(d.items()):
    c = d[(p, "C")]
    rm = statistics.median(x[0] for x in v); tm = statistics.median(x[1] for x in v)
    print(f"{p} {b[-40:]:40s} rate {rm:8.0f} ({rm/statistics.median(x[0] for x in c):.3f}x C)  cpu {tm:6.1f} us/req")
PY
