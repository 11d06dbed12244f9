#!/usr/bin/env bash
# Builds the release artefacts of mtls for this machine's architecture into dist/:
#   dist/mtls-<version>-linux-<arch>.tar.gz (+ .sha256)   the static binary (Swift runtime and
#       FoundationEssentials linked in, no ICU; needs only glibc, OpenSSL 3, zlib and the C++ runtime), the man page,
#       the bash/zsh/fish completions, README.md, CHANGELOG.md and LICENSE
#   dist/mtls_<version>_<debian-arch>.deb (+ .sha256)      the same binary installed as /usr/bin/mtls,
#       man page and completions in Debian's places, Depends computed by dpkg-shlibdeps
#
#   scripts/release.sh                      release build (swift build with scripts/release-flags.sh:
#                                           -c release --static-swift-stdlib)
#   SCRATCH=/path scripts/release.sh        another build directory (default .build, shared with
#                                           scripts/memory-flat.sh's release build)
# scripts/test-release.sh checks both artefacts (run by scripts/test.sh in the full run).
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH="${SCRATCH:-.build}"

step() { printf '==> %s\n' "$*" >&2; }

ROOT=$PWD
source scripts/release-flags.sh

step "release build (static Swift runtime)"
start=$SECONDS
swift build "${RELEASE_FLAGS[@]}" --scratch-path "$SCRATCH" --product mtls >&2
binary="$(swift build "${RELEASE_FLAGS[@]}" --scratch-path "$SCRATCH" --show-bin-path)/mtls"
echo "release: build took $((SECONDS - start)) s" >&2

version=$("$binary" --version | awk '{print $2}')
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "release: '$binary --version' gave no version" >&2; exit 1; }
arch=$(uname -m)
deb_arch=$(dpkg --print-architecture)

# The generated docs must be what this binary generates: never ship a stale man page.
MTLS_BIN="$binary" scripts/gen-docs.sh --check

mkdir -p dist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Stripped: the symbols are two thirds of the file and nothing at run time reads them (Swift's
# reflection metadata lives in its own sections, which strip keeps).
stripped="$work/mtls"
strip --strip-unneeded --remove-section=.comment --remove-section=.note -o "$stripped" "$binary"
chmod 755 "$stripped"

# Timestamps from the commit, so the same commit gives the same archive.
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH=$epoch

step "tarball"
name="mtls-$version-linux-$arch"
root="$work/$name"
mkdir -p "$root/completions"
cp "$stripped" "$root/mtls"
cp docs/mtls.1 "$root/mtls.1"
cp completions/mtls.bash completions/_mtls completions/mtls.fish "$root/completions/"
cp README.md CHANGELOG.md "$root/"
cp LICENSE "$root/"
tarball="dist/$name.tar.gz"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$work" -cf - "$name" | gzip -9n >"$tarball"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")

step "Debian package"
deb_root="$work/deb"
install -D -m 755 "$stripped" "$deb_root/usr/bin/mtls"
install -d "$deb_root/usr/share/man/man1"
gzip -9n <docs/mtls.1 >"$deb_root/usr/share/man/man1/mtls.1.gz"
install -D -m 644 completions/mtls.bash "$deb_root/usr/share/bash-completion/completions/mtls"
install -D -m 644 completions/_mtls "$deb_root/usr/share/zsh/vendor-completions/_mtls"
install -D -m 644 completions/mtls.fish "$deb_root/usr/share/fish/vendor_completions.d/mtls.fish"
install -D -m 644 packaging/debian/copyright "$deb_root/usr/share/doc/mtls/copyright"
# The maintainer is whoever made the commit released (the repository names no other).
maintainer=$(git log -1 --format='%an <%ae>' 2>/dev/null || true)
[[ -n $maintainer ]] || maintainer="mtls maintainers <root@localhost>"
sed -e "s/@VERSION@/$version/" -e "s/@DATE@/$(date -u -R -d "@$epoch")/" -e "s|@MAINTAINER@|$maintainer|" \
  packaging/debian/changelog.in | gzip -9n >"$deb_root/usr/share/doc/mtls/changelog.gz"
gzip -9n <CHANGELOG.md >"$deb_root/usr/share/doc/mtls/CHANGELOG.md.gz"
chmod 644 "$deb_root/usr/share/man/man1/mtls.1.gz" "$deb_root/usr/share/doc/mtls/"*.gz

# Depends: dpkg-shlibdeps reads the binary's NEEDED libraries and the packages' symbols files
# (libssl3, zlib1g, libc6, libgcc-s1 with their minimal versions).
mkdir -p "$work/shlibs/debian"
printf 'Source: mtls\n\nPackage: mtls\nArchitecture: any\n' >"$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O -e "$deb_root/usr/bin/mtls" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || { echo "release: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
installed_size=$(du -sk --apparent-size "$deb_root" | cut -f1)
mkdir -p "$deb_root/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$deb_arch/" -e "s/@DEPENDS@/$depends/" -e "s/@SIZE@/$installed_size/" -e "s|@MAINTAINER@|$maintainer|" \
  packaging/debian/control.in >"$deb_root/DEBIAN/control"
(cd "$deb_root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$deb_root/DEBIAN/md5sums"
chmod 644 "$deb_root/DEBIAN/control" "$deb_root/DEBIAN/md5sums"
find "$deb_root" -type d -exec chmod 755 {} +
find "$deb_root" -exec touch -h -d "@$epoch" {} +
deb="dist/mtls_${version}_${deb_arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$deb_root" "$deb" >&2
(cd dist && sha256sum "$(basename "$deb")" >"$(basename "$deb").sha256")

echo "release: $tarball ($(du -h "$tarball" | cut -f1)), $deb ($(du -h "$deb" | cut -f1)); Depends: $depends" >&2
printf 'TARBALL=%s\nDEB=%s\nVERSION=%s\nBINARY=%s\n' "$tarball" "$deb" "$version" "$binary"
