#!/usr/bin/env bash
# Checks the release artefacts the way a user without a Swift toolchain gets them:
#   1. the tarball: its SHA-256, its contents, and the unpacked binary run in a mount namespace
#      where the Swift toolchain (/opt/swift, or wherever `swift` lives) is an empty directory and
#      libxml2 is hidden: `ldd` may show only glibc, OpenSSL 3, zlib and the C++ runtime (libstdc++,
#      libgcc_s: the Swift runtime needs them), and `mtls demo` must pass;
#   2. the .deb: lintian reports no error; `dpkg -i` installs /usr/bin/mtls, the man page
#      (`man -l` renders it) and the completions (bash, zsh, fish load them); `mtls demo` passes
#      from /usr/bin with the toolchain hidden; `dpkg -r` removes it all again.
#
#   scripts/test-release.sh              runs scripts/release.sh first, then checks
#   scripts/test-release.sh --no-build   checks what dist/ holds for this version
# Needs root (unshare -m, dpkg -i). Exit status: 0 all checks passed, 1 a check failed.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "test-release: FAILED: $*" >&2; exit 1; }
pass() { echo "test-release: ok: $*"; }
[[ $(id -u) == 0 ]] || fail "needs root (unshare -m for the hidden toolchain, dpkg -i for the package)"

if [[ "${1:-}" == "--no-build" ]]; then
  version=$(sed -n 's/^    public static let version = "\(.*\)"$/\1/p' Sources/MTLSCommandLine/MTLSCommand.swift)
  tarball="dist/mtls-$version-linux-$(uname -m).tar.gz"
  deb="dist/mtls_${version}_$(dpkg --print-architecture).deb"
else
  outputs=$(scripts/release.sh)
  tarball=$(sed -n 's/^TARBALL=//p' <<<"$outputs")
  deb=$(sed -n 's/^DEB=//p' <<<"$outputs")
  version=$(sed -n 's/^VERSION=//p' <<<"$outputs")
fi
[[ -f $tarball && -f $deb ]] || fail "missing $tarball or $deb: run scripts/release.sh"

work=$(mktemp -d)
installed_by_us=0
cleanup() {
  if [[ $installed_by_us == 1 ]]; then dpkg -r mtls >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The directories that hold a Swift toolchain or runtime on this machine: all hidden.
toolchains=()
if command -v swift >/dev/null; then
  toolchains+=("$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")")
fi
for candidate in /opt/swift /usr/lib/swift /usr/share/swift; do
  [[ -d $candidate ]] && toolchains+=("$candidate")
done
# awk reads all of ldconfig's output: one that stopped at the first match could leave ldconfig
# writing into a closed pipe, and SIGPIPE (status 141 under pipefail) would end this script.
libxml2=$(ldconfig -p | awk '/libxml2\.so\.2 / && !found {print $NF; found = 1}')
mkdir "$work/empty"

# Runs a bash program in a mount namespace with the toolchains and libxml2 hidden.
hidden() {
  local mounts=""
  for directory in "${toolchains[@]}"; do mounts+="mount --bind '$work/empty' '$directory'; "; done
  [[ -n $libxml2 ]] && mounts+="mount --bind /dev/null '$libxml2'; "
  unshare -m bash -c "set -euo pipefail; $mounts
    if ldconfig -p | grep libswiftCore >/dev/null; then echo 'the Swift runtime is still visible' >&2; exit 1; fi
    for d in ${toolchains[*]:-}; do [[ -z \$(ls -A \"\$d\") ]] || { echo \"\$d is not hidden\" >&2; exit 1; }; done
    $1"
}

# What ldd may show: glibc (libc, libm, libpthread, libdl, librt, the loader, the vDSO), OpenSSL 3,
# zlib, and the C++ runtime the Swift runtime needs (libstdc++, libgcc_s).
check_ldd() {
  local report=$1 name
  grep -q 'not found' "$report" && fail "ldd: libraries not found:$(grep 'not found' "$report")"
  while read -r name _; do
    case $name in
      linux-vdso.so.1 | libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | /lib64/ld-linux-*.so.2 | ld-linux-*.so.* | \
        libssl.so.3 | libcrypto.so.3 | libz.so.1 | libstdc++.so.6 | libgcc_s.so.1) ;;
      *) fail "ldd shows $name, which is neither glibc, OpenSSL, zlib nor the C++ runtime (full list: $(tr '\n' ' ' <"$report"))" ;;
    esac
  done <"$report"
}

# 1. The tarball.
name=$(basename "$tarball" .tar.gz)
(cd "$(dirname "$tarball")" && sha256sum --quiet -c "$name.tar.gz.sha256") || fail "$tarball does not match $name.tar.gz.sha256"
tar -xzf "$tarball" -C "$work"
root="$work/$name"
for file in mtls mtls.1 README.md CHANGELOG.md completions/mtls.bash completions/_mtls completions/mtls.fish; do
  [[ -f $root/$file ]] || fail "$tarball has no $name/$file"
done
cmp -s LICENSE "$root/LICENSE" || fail "$tarball has no LICENSE, or one that differs from the repository's"
pass "tarball: sha256 and contents"

hidden "ldd '$root/mtls' >'$work/ldd-tarball.txt'"
check_ldd "$work/ldd-tarball.txt"
pass "tarball: ldd shows only $(awk '{print $1}' "$work/ldd-tarball.txt" | tr '\n' ' ')"
hidden "'$root/mtls' --version >'$work/version.txt'"
grep -q "^mtls $version (commit [0-9a-f]\{12\}" "$work/version.txt" || fail "--version says: $(cat "$work/version.txt")"
pass "tarball: $(cat "$work/version.txt")"
hidden "cd '$work' && '$root/mtls' demo >'$work/demo-tarball.txt' 2>&1" || fail "mtls demo from the tarball with the toolchain hidden: $(tail -20 "$work/demo-tarball.txt")"
grep -q "Demo complete." "$work/demo-tarball.txt" || fail "mtls demo from the tarball did not complete: $(tail -20 "$work/demo-tarball.txt")"
pass "tarball: mtls demo passes with the toolchain and libxml2 hidden"

# 2. The Debian package.
lintian --allow-root "$deb" >"$work/lintian.txt" 2>&1 || true
grep '^E:' "$work/lintian.txt" && fail "lintian reports errors on $deb (above)"
pass "lintian: no errors$(grep -c '^W:' "$work/lintian.txt" | sed 's/^0$//; s/^\(.\+\)$/, \1 warning(s): /')$(grep '^W:' "$work/lintian.txt" | sed 's/^W: mtls: //' | tr '\n' ' ')"

if dpkg-query -W -f='${db:Status-Status}' mtls 2>/dev/null | grep -q installed; then
  fail "a package named mtls is already installed; remove it (dpkg -r mtls) before this test"
fi
dpkg -i "$deb" >"$work/dpkg.txt" 2>&1 || fail "dpkg -i $deb: $(cat "$work/dpkg.txt")"
installed_by_us=1
for file in /usr/bin/mtls /usr/share/man/man1/mtls.1.gz /usr/share/bash-completion/completions/mtls \
  /usr/share/zsh/vendor-completions/_mtls /usr/share/fish/vendor_completions.d/mtls.fish /usr/share/doc/mtls/copyright; do
  [[ -f $file ]] || fail "dpkg -i did not install $file"
done
MANWIDTH=80 man -P cat -l /usr/share/man/man1/mtls.1.gz >"$work/man.txt" 2>"$work/man-warnings.txt" || fail "man -l failed: $(cat "$work/man-warnings.txt")"
grep -q "mtls verify" "$work/man.txt" || fail "the installed man page has no 'mtls verify' section"
pass "deb: installed; man -l renders mtls(1), $(wc -l <"$work/man.txt") lines"
bash -c 'source /usr/share/bash-completion/completions/mtls && complete -p mtls' >/dev/null || fail "bash cannot load the installed completion"
if command -v fish >/dev/null; then
  # A fresh home: fish finds the completion on its own path (vendor_completions.d), not in a config.
  mkdir -p "$work/home"
  [[ $(HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" fish -c 'complete -C "mtls ver"' | cut -f1) == verify ]] ||
    fail "fish does not complete 'mtls ver' from vendor_completions.d"
fi
if command -v zsh >/dev/null; then
  zsh -f -c 'fpath=(/usr/share/zsh/vendor-completions $fpath); autoload -Uz compinit && compinit -u -D && [[ $_comps[mtls] == _mtls ]]' ||
    fail "zsh's compinit does not find _mtls in vendor-completions"
fi
pass "deb: bash, zsh and fish find the completions"
hidden "ldd /usr/bin/mtls >'$work/ldd-deb.txt' && cd '$work' && /usr/bin/mtls demo >'$work/demo-deb.txt' 2>&1" ||
  fail "mtls demo from the package with the toolchain hidden: $(tail -20 "$work/demo-deb.txt")"
check_ldd "$work/ldd-deb.txt"
grep -q "Demo complete." "$work/demo-deb.txt" || fail "mtls demo from the package did not complete"
pass "deb: /usr/bin/mtls demo passes with the toolchain hidden"
dpkg -r mtls >"$work/dpkg.txt" 2>&1 || fail "dpkg -r mtls: $(cat "$work/dpkg.txt")"
installed_by_us=0
[[ ! -e /usr/bin/mtls && ! -e /usr/share/man/man1/mtls.1.gz ]] || fail "dpkg -r mtls left files behind"
pass "deb: dpkg -r removed it"
echo "test-release: all checks passed ($tarball, $deb)"
