#!/usr/bin/env bash
# The Debian package as a user gets it: `cpack -G DEB` in the build folder,
# then the package's files (the binary, its man page, its bash and zsh
# completions),
# its dependencies, and the binary, man page and completion working from a
# copy unpacked elsewhere.
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
echo "test_deb: passed ($(basename "$deb"), $(du -h "$deb" | cut -f1))"
