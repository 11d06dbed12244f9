#!/usr/bin/env bash
# instructions-per-request.sh LABEL BIN [port]: user instructions per kept-alive request (callgrind, 1200 - 200 requests)
EC=/tmp/mtls-bench/ec; l=$1 b=$2 port=${3:-18443}; ca=$EC/root.pem; [[ $port == 18444 ]] && ca=/tmp/mtls-bench/rsa/root.pem
args=(https keepalive); [[ $b == *c_https* ]] && args=(keepalive)
for n in 200 1200; do valgrind --tool=callgrind --callgrind-out-file=/tmp/cg-$l-$n.out $b "${args[@]}" $port $ca /small $n >/dev/null 2>&1; done
x=$(grep -E "^summary|^totals" /tmp/cg-$l-200.out | head -1 | awk '{print $2}'); y=$(grep -E "^summary|^totals" /tmp/cg-$l-1200.out | head -1 | awk '{print $2}')
echo "$l port $port: $(( (y-x)/1000 )) instructions per request"
