#!/usr/bin/env bash
# Installs the Debian packages the mtls test suite and scripts/peers/* need.
# Idempotent: checks each package with dpkg first and exits quickly when all are present;
# runs `apt-get update` only when something is missing. Needs root (no sudo, no TTY needed).
set -euo pipefail

PACKAGES=(
  apache2 apache2-utils libapache2-mod-auth-mellon
  nginx
  openssl libssl-dev curl
  libnss3-tools faketime valgrind
  python3 python3-pysaml2
  libxml2-utils xmlsec1 libxml2-dev zlib1g-dev
  openjdk-17-jdk-headless libokhttp-java publicsuffix
  python3-venv python3-pip
  nodejs gnutls-bin golang-go lighttpd lighttpd-mod-openssl
  zsh fish man-db lintian dpkg-dev binutils
  chromium  # the HTML reports' browser test (scripts/report-browser-test.sh)
  parallel  # the sharded fleet of scripts/report-browser-test.sh (GNU parallel)
  # Kerberos (Negotiate) peer: a private MIT KDC, Apache mod_auth_gssapi, kinit/klist, python3-gssapi as a channel-binding acceptor
  krb5-kdc krb5-admin-server krb5-user libapache2-mod-auth-gssapi python3-gssapi
)

installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]
}

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root:  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}"
apt-get update -q
apt-get install -y -q --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"

# The packaged apache2/nginx services are not used by the tests (scripts/peers/ runs its own
# instances on high loopback ports); nothing here starts or enables them.
still=()
for p in "${missing[@]}"; do installed "$p" || still+=("$p"); done
if ((${#still[@]})); then
  echo "install-deps: still missing after install: ${still[*]}" >&2
  exit 1
fi
echo "install-deps: done"
