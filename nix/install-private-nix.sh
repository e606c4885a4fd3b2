#!/bin/sh
# Installs Debian trixie's Nix (nix-bin 2.26, new enough for the real nixpkgs lib, which needs
# Nix >= 2.18) into a private prefix, for the real-input flake evaluation of `cargo xtask test`
# (docs/nix-and-ci.md). The system is not changed: apt reads a private sources list and keeps
# its lists and downloads under the prefix, the packages are unpacked with `dpkg-deb -x` (never
# installed), and Nix runs through trixie's own dynamic loader with the unpacked libraries.
# Idempotent: a second run with a working prefix does nothing.
#
# Usage: nix/install-private-nix.sh [PREFIX]   (default: $INFX_PRIVATE_NIX, else
# <repository>/target/private-nix). Afterwards PREFIX/bin/nix is the private Nix.
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-${INFX_PRIVATE_NIX:-$repo/target/private-nix}}
suite=trixie
# The Debian mirror the machine's apt already uses (deb822 .sources or a one-line list), or
# INFX_DEBIAN_MIRROR: the script names no host of its own.
mirror=${INFX_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(sed -n 's|^URIs:[[:space:]]*\([^[:space:]]*/debian\)/\{0,1\}[[:space:]]*$|\1|p' \
        /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
fi
if [ -z "$mirror" ]; then
    mirror=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { sub(/\/$/, "", $2); print $2; exit }' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null)
fi
if [ -z "$mirror" ]; then
    echo "install-private-nix: no Debian mirror in the system's apt sources (set INFX_DEBIAN_MIRROR)" >&2
    exit 1
fi

if [ -x "$prefix/bin/nix" ] && [ -f "$prefix/installed" ] && "$prefix/bin/nix" --version >/dev/null 2>&1; then
    echo "private Nix already in $prefix: $("$prefix/bin/nix" --version)"
    exit 0
fi

arch=$(dpkg --print-architecture)
case "$arch" in
    amd64) multiarch=x86_64-linux-gnu ;;
    arm64) multiarch=aarch64-linux-gnu ;;
    *) echo "install-private-nix: unsupported architecture $arch" >&2; exit 1 ;;
esac

rm -rf "$prefix"
mkdir -p "$prefix/apt/lists/partial" "$prefix/apt/cache/archives/partial" "$prefix/debs" "$prefix/root" "$prefix/bin"
echo "deb $mirror $suite main" >"$prefix/apt/sources.list"
# The release signatures are checked against the system's Debian archive keys, as for any
# apt source; only the lists, caches and sources are private.
set -- -o "Dir::Etc::sourcelist=$prefix/apt/sources.list" -o Dir::Etc::sourceparts=- \
    -o "Dir::State::Lists=$prefix/apt/lists" -o "Dir::Cache=$prefix/apt/cache" \
    -o Dir::State::status=/dev/null -o APT::Sandbox::User=root
apt-get "$@" -q update

# nix-bin and the shared libraries it loads, directly or through other libraries: the
# recursive dependency closure, keeping the library packages (perl, PAM and installer bits
# are for Nix's scripts and other programs, not for the `nix` binary).
apt-cache "$@" depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances nix-bin 2>/dev/null |
    grep -v '^[ <]' | sort -u |
    grep -E '^(lib|zlib1g$)' |
    grep -vE 'perl|pam|debconf|debian-installer|newt|slang|textwrap|semanage|audit|cap-ng|libdb5|gdbm' \
        >"$prefix/libraries.txt"
# One package name a line, split on purpose.
# shellcheck disable=SC2046
(cd "$prefix/debs" && apt-get "$@" -q download nix-bin $(cat "$prefix/libraries.txt"))
for deb in "$prefix"/debs/*.deb; do
    dpkg-deb -x "$deb" "$prefix/root"
done

libdir=$prefix/root/usr/lib/$multiarch
loader=
for candidate in "$libdir"/ld-linux-*.so.*; do
    [ -e "$candidate" ] && loader=$candidate && break
done
[ -n "$loader" ] || { echo "install-private-nix: no dynamic loader in $libdir" >&2; exit 1; }
# Every library must resolve inside the prefix (none from the system, none missing).
if "$loader" --library-path "$libdir" --list "$prefix/root/usr/bin/nix" |
    grep -v -e "$prefix/root" -e linux-vdso; then
    echo "install-private-nix: libraries above do not resolve inside $prefix" >&2
    exit 1
fi

# Nix is one binary dispatching on its name (nix, nix-instantiate, ...).
cat >"$prefix/bin/nix" <<EOF
#!/bin/sh
exec "$loader" --library-path "$libdir" --argv0 "\$(basename "\$0")" "$prefix/root/usr/bin/nix" "\$@"
EOF
chmod +x "$prefix/bin/nix"
for name in nix-instantiate nix-store nix-build; do
    ln -sf nix "$prefix/bin/$name"
done

"$prefix/bin/nix" --version
"$prefix/bin/nix" --version >"$prefix/installed"
echo "private Nix installed in $prefix"
