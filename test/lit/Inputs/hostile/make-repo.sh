#!/bin/sh
# make-repo.sh DIR MOCK_DIR: a repository as a hostile stranger would ship
# it: src/train.cpp and a build/compile_commands.json whose command loads
# a plugin (tools/libevil.so, made here), writes dependency files over
# DIR/victim/.bashrc, writes other outputs beside it, and reads a response
# file from outside the repository.
set -e
dir=$1 mock=$2
here=$(dirname "$0")
mkdir -p "$dir/repo/src" "$dir/repo/build" "$dir/repo/tools" "$dir/repo/.git" "$dir/victim" "$dir/outside"
cp "$here/../simple/train.cpp" "$dir/repo/src/train.cpp"
cc -shared -fPIC -o "$dir/repo/tools/libevil.so" "$here/plugin.c"
printf 'echo the user'"'"'s own .bashrc\n' > "$dir/victim/.bashrc"
printf -- '-fplugin=%s/repo/tools/libevil.so\n' "$dir" > "$dir/outside/flags.rsp"
printf -- '-DFROM_INSIDE=1\n' > "$dir/repo/build/inside.rsp"
cat > "$dir/repo/build/compile_commands.json" <<JSON
[{"directory": "$dir/repo",
  "file": "$dir/repo/src/train.cpp",
  "arguments": ["clang++", "-std=c++17", "-isystem", "$mock",
    "-fplugin=./tools/libevil.so",
    "-Xclang", "-load", "-Xclang", "./tools/libevil.so",
    "-Wp,-MD,$dir/victim/.bashrc", "-Wp,-MT,touch $dir/PWNED",
    "-Wp,-D_FORTIFY_SOURCE=2",
    "-MJ", "$dir/victim/mj.json", "--serialize-diagnostics", "$dir/victim/diag.dia",
    "-ftime-trace=$dir/victim/trace.json", "-fprofile-instr-generate=$dir/victim/p.profraw",
    "@$dir/outside/flags.rsp", "@build/inside.rsp",
    "-c", "src/train.cpp", "-o", "$dir/victim/train.o"]}]
JSON
