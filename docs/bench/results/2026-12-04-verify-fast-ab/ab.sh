#!/usr/bin/env bash
# A/B of the in-process verify rates: before and after mtls-bench, Python; and --batch vs Python whole process.
W=/tmp/verify-bench/work
B=/tmp/verify-bench/before-bin
A=/tmp/verify-bench/after-bin
PY=/work/wt-verify/scripts/bench
ROUNDS=${ROUNDS:-5}
for alg in ec rsa; do
  d=$W/$alg
  for r in $(seq $ROUNDS); do
    for who in before after python before-batch after-batch; do
      case $who in
        before) line=$($B/mtls-bench verify leaf $d/root.pem $d/int.pem $d/der.list 1893456000 bench.test 2>&1 | grep RESULT) ;;
        after) line=$($A/mtls-bench verify leaf $d/root.pem $d/int.pem $d/der.list 1893456000 bench.test 2>&1 | grep RESULT) ;;
        python) s=$(date +%s.%N); line=$(cd $PY && python3 py_verify.py $d/root.pem $d/int.pem $d/der.list 1893456000 bench.test 2>&1 | grep RESULT); e=$(date +%s.%N)
          line="$line wall_rate=$(python3 -c "print(2000/($e-$s))")" ;;
        before-batch|after-batch)
          bin=$B; [[ $who == after-batch ]] && bin=$A
          s=$(date +%s.%N); $bin/mtls verify --batch $(cat $d/leaves.list) --anchors $d/root.pem --intermediates $d/int.pem --at 2030-01-01T00:00:00Z --host bench.test >/dev/null; e=$(date +%s.%N)
          line="RESULT rate=$(python3 -c "print(2000/($e-$s))")" ;;
      esac
      echo "$alg $who $line"
    done
  done
done
