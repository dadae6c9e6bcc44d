#!/bin/sh
# usage: without-llvm.sh CMD [ARG...]
# Runs CMD as on a machine without the LLVM packages: PATH only /usr/bin
# and /bin, no LD_LIBRARY_PATH, and, where a mount namespace can be made
# (unshare, as root or with user namespaces), every LLVM and Clang library
# and directory hidden (an empty directory or /dev/null mounted over it).
# Says which it could do, first, on stderr.
if [ "${WITHOUT_LLVM_INSIDE:-}" = 1 ]; then
  Empty=$(mktemp -d)
  Hidden=0
  for Dir in /usr/lib/llvm-*; do
    [ -d "$Dir" ] && mount --bind "$Empty" "$Dir" && Hidden=$((Hidden + 1))
  done
  for Lib in /usr/lib/*/libLLVM* /usr/lib/*/libclang*; do
    [ -f "$Lib" ] && mount --bind /dev/null "$Lib" && Hidden=$((Hidden + 1))
  done
  if ls /usr/lib/llvm-*/lib/libLLVM* > /dev/null 2>&1; then
    echo "without-llvm: LLVM still visible" >&2
    exit 1
  fi
  echo "without-llvm: $Hidden LLVM and Clang directories and libraries hidden" >&2
  exec env -i HOME="$HOME" PATH=/usr/bin:/bin "$@"
fi
if unshare -rm true 2> /dev/null; then
  WITHOUT_LLVM_INSIDE=1 exec unshare -rm sh "$0" "$@"
fi
echo "without-llvm: no mount namespace here: PATH and LD_LIBRARY_PATH stripped only" >&2
exec env -i HOME="$HOME" PATH=/usr/bin:/bin "$@"
