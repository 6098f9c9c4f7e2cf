#!/usr/bin/env bash
# What a user gets from `cmake --install` and from the packages: installs the
# build into a temporary prefix and checks that the installed binary runs,
# that `man -l` reads the manual page and it lists every command, that the
# bash completion completes a subcommand and an option, that the Python
# package finds the installed library, and that `cpack -G TGZ` and
# `cpack -G DEB` package the same files (dpkg-deb -c) with the .deb's
# dependencies computed.
#
#   tests/install/check_install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_install: $*" >&2; exit 1; }

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log" >&2; fail "cmake --install failed"; }

# The files a user looks for, each at its conventional place.
expected=(bin/pp-timeline bin/pp-demo share/man/man1/pp-timeline.1
          share/bash-completion/completions/pp-timeline share/zsh/site-functions/_pp-timeline
          include/pp_timeline/shim.h include/pp_timeline/shim_c.h
          lib/python3/dist-packages/pp_timeline_shim/__init__.py)
for f in "${expected[@]}"; do [[ -e $prefix/$f ]] || fail "not installed: $f"; done
lib=$(cd "$prefix" && find lib* -maxdepth 2 -name libppt_shim.so.0 -not -path '*python*' | head -1)
[[ -n $lib ]] || fail "libppt_shim.so.0 not installed"

# The installed binary runs, from outside the build.
"$prefix/bin/pp-timeline" --version | grep -qx "pp-timeline [0-9.]*" || fail "pp-timeline --version"
"$prefix/bin/pp-timeline" stats --version | grep -qx "pp-timeline [0-9.]*" || fail "pp-timeline stats --version"

# The manual page: man reads it, and it names every subcommand and option
# that --help does (it is written from the same options).
man_text=$(MANWIDTH=100 man -l "$prefix/share/man/man1/pp-timeline.1" 2>"$work/man.err" | col -b) ||
  { cat "$work/man.err" >&2; fail "man -l failed"; }
[[ ! -s $work/man.err ]] || { cat "$work/man.err" >&2; fail "man printed warnings"; }
for word in NAME SYNOPSIS OPTIONS COMMANDS "EXIT STATUS" "pp-timeline stats" "pp-timeline diff" \
            "pp-timeline batch" "pp-timeline watch" "pp-timeline report" --log_dir --fail-if-slower --steps; do
  grep -qF -- "$word" <<<"$man_text" || fail "the manual page lacks '$word'"
done
for opt in $("$prefix/bin/pp-timeline" diff --help | grep -oE '^ +(-[a-z],)?--[a-z_-]+' | grep -oE -- '--[a-z_-]+'); do
  grep -qF -- "$opt" <<<"$man_text" || fail "the manual page lacks diff's $opt"
done

# The bash completion: a subcommand from its prefix, a command's options,
# an option's choices.
complete_words() {
  # $1: the words so far (the last one being completed)
  (cd "$work" && bash --norc --noprofile -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    _pp_timeline; printf "%s\n" "${COMPREPLY[@]}"' _ "$prefix/share/bash-completion/completions/pp-timeline" "$@")
}
[[ $(complete_words pp-timeline st) == stats ]] || fail "bash: 'pp-timeline st<TAB>' gave '$(complete_words pp-timeline st)'"
[[ $(complete_words pp-timeline diff --fail-if) == --fail-if-slower ]] || fail "bash: 'diff --fail-if<TAB>'"
[[ $(complete_words pp-timeline --align-clocks o) == off ]] || fail "bash: '--align-clocks o<TAB>'"
complete_words pp-timeline stats --gat | grep -q . && fail "bash: stats offers diff's --gate"
if command -v zsh >/dev/null; then zsh -n "$prefix/share/zsh/site-functions/_pp-timeline" || fail "zsh: syntax"; fi

# The Python package loads the installed library (no copy of it beside).
if command -v python3 >/dev/null; then
  # PPT_PYTHON_ENV: what a sanitizer build needs preloaded (tests/CMakeLists.txt).
  # shellcheck disable=SC2086
  env ${PPT_PYTHON_ENV:-} PYTHONPATH=$prefix/lib/python3/dist-packages python3 -c '
import os, sys, pp_timeline_shim as p
lib = p.load_library()
print(os.path.realpath(lib._name))' >"$work/python.out" 2>&1 || { cat "$work/python.out" >&2; fail "python: pp_timeline_shim"; }
  [[ $(cat "$work/python.out") == "$(realpath "$prefix/$lib")" ]] ||
    fail "python: loaded $(cat "$work/python.out"), not the installed $prefix/$lib"
fi

# The packages hold the same files, under /usr.
(cd "$work" && cpack -G TGZ --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; fail "cpack -G TGZ failed"; }
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >>"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
deb=$(ls "$work"/pkg/*.deb) tgz=$(ls "$work"/pkg/*.tar.gz)
deb_files=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./||')
tgz_files=$(tar tzf "$tgz" | sed 's|^[^/]*/||')
for f in bin/pp-timeline bin/pp-demo share/man/man1/pp-timeline.1 share/bash-completion/completions/pp-timeline \
         share/zsh/site-functions/_pp-timeline include/pp_timeline/shim_c.h \
         lib/python3/dist-packages/pp_timeline_shim/__init__.py; do
  grep -qx "usr/$f" <<<"$deb_files" || fail "the .deb lacks /usr/$f"
  grep -qx "usr/$f" <<<"$tgz_files" || fail "the .tar.gz lacks usr/$f"
done
grep -q 'libppt_shim.so.0' <<<"$deb_files" || fail "the .deb lacks libppt_shim.so.0"
depends=$(dpkg-deb -f "$deb" Depends)
# librsvg2-2 is loaded at run time for .png (dlopen), so dpkg-shlibdeps
# cannot see it: the package names it itself.
for p in libre2 libfmt libarchive libc6 librsvg2-2; do
  grep -q "$p" <<<"$depends" || fail "the .deb's Depends lacks $p: $depends"
done
# The packaged binaries and library carry no debug information (a
# RelWithDebInfo build's pp-timeline is tens of MB with it).
mkdir -p "$work/deb"
dpkg-deb -x "$deb" "$work/deb"
deb_lib=$(cd "$work/deb" && find usr/lib* -name 'libppt_shim.so.0*' -type f | head -1)
[[ -n $deb_lib ]] || fail "the .deb holds no libppt_shim.so.0 file"
for f in usr/bin/pp-timeline usr/bin/pp-demo "$deb_lib"; do
  if readelf -S --wide "$work/deb/$f" | grep -qE '\.debug_(info|line)'; then
    fail "the .deb's $f keeps its debug information ($(du -h "$work/deb/$f" | cut -f1))"
  fi
done
echo "check_install: ok ($(wc -l <<<"$deb_files") paths in $(basename "$deb"); Depends: $depends)"
