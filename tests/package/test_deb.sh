#!/usr/bin/env bash
# The Debian package as a user gets it: `cpack -G DEB` in the build folder,
# then the package's files (the binary, its man page, its bash and zsh
# completions), its dependencies, the binary, man page and completion
# working from a copy unpacked elsewhere, and, as root, the package
# installed with apt-get, run and removed.
#   test_deb.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
fail() { echo "test_deb: FAILED: $*" >&2; exit 1; }
for tool in cpack dpkg-deb dpkg-shlibdeps help2man; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: no $tool (scripts/install-deps.sh installs it)"; exit 77; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$build" && cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log" >&2; fail "cpack"; }
deb=$(ls "$tmp"/out/cudaconv_*_*.deb)

contents=$(dpkg-deb -c "$deb" | awk '{print $NF}')
for f in ./usr/bin/cudaconv ./usr/share/man/man1/cudaconv.1.gz \
         ./usr/share/bash-completion/completions/cudaconv \
         ./usr/share/zsh/vendor-completions/_cudaconv; do
  grep -qx -- "$f" <<<"$contents" || fail "$f not in the package: $contents"
done
depends=$(dpkg-deb -f "$deb" Depends)
grep -q "libopencv-imgcodecs" <<<"$depends" || fail "no OpenCV in Depends: $depends"

dpkg-deb -x "$deb" "$tmp/root"
bin=$tmp/root/usr/bin/cudaconv
"$bin" --version | head -1 | grep -q '^cudaconv ' || fail "--version of the unpacked binary"
# A build with Exiv2 (TIFF outputs' metadata) needs its library installed too.
if "$bin" --version | grep -q 'Exiv2 [0-9]'; then
  grep -q "libexiv2" <<<"$depends" || fail "no Exiv2 in Depends: $depends"
fi
"$bin" "$(dirname "$0")/../../images/camera-crop.png" -f edge -k cpu -o "$tmp/edge.png" ||
  fail "the unpacked binary did not filter"
zcat "$tmp/root/usr/share/man/man1/cudaconv.1.gz" | grep -q '^\.SH "EXIT STATUS"' ||
  fail "the man page has no EXIT STATUS"
zcat "$tmp/root/usr/share/man/man1/cudaconv.1.gz" | grep -q 'shard' || fail "the man page lacks --shard"

# The completion, as bash loads it, completing -k and --sh.
source "$tmp/root/usr/share/bash-completion/completions/cudaconv"
complete_words() { COMP_WORDS=("$bin" "$@"); COMP_CWORD=${#COMP_WORDS[@]}; COMP_CWORD=$((COMP_CWORD - 1)); COMPREPLY=(); _cudaconv; echo "${COMPREPLY[*]}"; }
[[ " $(complete_words -k cpu) " == *" cpu-ref "* ]] || fail "-k cpu does not complete to cpu-ref"
[[ $(complete_words --sha) == "--shard" ]] || fail "--sha does not complete to --shard"
[[ " $(complete_words -f gaus) " == *" gaussian "* ]] || fail "-f gaus does not complete to gaussian"
# The zsh completion, as zsh autoloads it from fpath, with compadd and
# _files standing in for zsh's completion system: the words it offers.
if command -v zsh >/dev/null; then
  zsh_words() {
    zsh -f -c 'fpath=("$1" $fpath); autoload -Uz _cudaconv
      compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }
      _files() { :; }
      words=("${@:2}"); CURRENT=${#words}; _cudaconv' zsh_words \
      "$tmp/root/usr/share/zsh/vendor-completions" "$bin" "$@" | tr '\n' ' '
  }
  [[ " $(zsh_words -k cpu) " == *" cpu-ref "* ]] || fail "zsh: -k does not offer cpu-ref"
  [[ " $(zsh_words --sha) " == *" --shard "* ]] || fail "zsh: options do not include --shard"
  [[ " $(zsh_words -f gaus) " == *" gaussian "* ]] || fail "zsh: -f does not offer gaussian"
  [[ " $(zsh_words --combine "") " == " magnitude max sum stack "* ]] || fail "zsh: --combine's values"
else
  echo "test_deb: no zsh here; its completion not tried (scripts/install-deps.sh --test installs zsh)"
fi
# Installed as a user installs it: apt-get takes its Depends from Debian
# (already there after scripts/install-deps.sh, or downloaded), the
# installed binary runs the main job, and the package is removed again. It
# changes the system, so only as root and where no cudaconv is installed.
if [[ $(id -u) -ne 0 ]]; then
  echo "test_deb: not installed with apt-get (it needs root)"
elif dpkg -s cudaconv >/dev/null 2>&1 || [[ -e /usr/bin/cudaconv ]]; then
  echo "test_deb: not installed with apt-get (a cudaconv is installed already)"
else
  remove() { DEBIAN_FRONTEND=noninteractive apt-get remove -y -q cudaconv >"$tmp/remove.log" 2>&1; }
  trap 'remove; rm -rf "$tmp"' EXIT
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$tmp/apt.log" 2>&1 ||
    { cat "$tmp/apt.log" >&2; fail "apt-get install $(basename "$deb")"; }
  [[ $(command -v cudaconv) == /usr/bin/cudaconv ]] || fail "no cudaconv on PATH after apt-get install"
  cudaconv "$(dirname "$0")/../../images/camera-crop.png" -f edge -k cpu -o "$tmp/installed.png" ||
    fail "the installed binary did not filter"
  cmp -s "$tmp/edge.png" "$tmp/installed.png" || fail "the installed binary's output differs"
  remove || { cat "$tmp/remove.log" >&2; fail "apt-get remove cudaconv"; }
  [[ ! -e /usr/bin/cudaconv ]] || fail "/usr/bin/cudaconv left after apt-get remove"
  trap 'rm -rf "$tmp"' EXIT
  echo "test_deb: installed with apt-get, ran the main job, removed"
fi
echo "test_deb: passed ($(basename "$deb"), $(du -h "$deb" | cut -f1))"
