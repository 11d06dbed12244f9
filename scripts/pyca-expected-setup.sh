# Sourced by scripts/gen-pyca-*-expected.sh with the corpus folder's name under
# TestCerts/third-party: sets ROOT_DIR, CORPUS, OUT (its EXPECTED.tsv), OPENSSL and WORK (removed
# at exit), and gives openssl an empty configuration and the C locale, so that what it prints
# depends on the file alone.
ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORPUS="$ROOT_DIR/TestCerts/third-party/$1"
OUT="$CORPUS/EXPECTED.tsv"
OPENSSL="${OPENSSL:-openssl}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export OPENSSL_CONF="$WORK/empty.cnf"
: >"$OPENSSL_CONF"
export LC_ALL=C
