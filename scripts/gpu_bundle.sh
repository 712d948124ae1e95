#!/usr/bin/env bash
# Packs the built kiln and kiln-runner with the shared libraries they load
# (glibc and its loader included) into one compressed archive that runs on a
# Linux x86-64 machine with none of Kiln's dependencies installed: the GPU
# machine of bench/gpu/device_check.sh, which has a CUDA driver and Toolkit
# (nvcc) but no Debian packages, and takes at most 64 MiB of files.
#
# The binaries run through the bundled dynamic loader with the bundle's lib/
# as their library path, so an older glibc there does not matter and the
# machine's own libraries are not mixed in, with two exceptions: the driver
# (libcuda.so.1, dlopen'ed through the loader's cache) and, unless
# --with-cuda-libs, the CUDA Toolkit's NVRTC and nvJitLink. Those two are
# ~210 MB (nvJitLink alone ~28 MB with xz) and the GPU machine has a toolkit, so the
# wrapper finds them there at run time (KILN_CUDA_LIB, $CUDA_HOME/lib64,
# next to nvcc, /usr/local/cuda/lib64); their sonames must match this
# build's (libnvrtc.so.13: a CUDA 13 toolkit).
#
#   bash scripts/gpu_bundle.sh [--with-cuda-libs] [BUILD_DIR]   # default: build
# writes BUILD_DIR/gpu-bundle/kiln-gpu.tar.xz (the build folder is ignored
# by git) and prints its size. Unpacked: kiln-gpu/bin/kiln is the command.
set -euo pipefail
cd "$(dirname "$0")/.."
with_cuda_libs=0
if [ "${1:-}" = "--with-cuda-libs" ]; then with_cuda_libs=1; shift; fi
BUILD_DIR="${1:-build}"
OUT_DIR="$BUILD_DIR/gpu-bundle"
for exe in kiln kiln-runner; do
  [ -x "$BUILD_DIR/tools/$exe" ] || { echo "gpu_bundle: $BUILD_DIR/tools/$exe is not built" >&2; exit 1; }
done
stage="$OUT_DIR/stage/kiln-gpu"
rm -rf "$OUT_DIR/stage"
mkdir -p "$stage/bin" "$stage/libexec" "$stage/lib"

# The executables without their debug information (a RelWithDebInfo kiln is
# ten times its code).
for exe in kiln kiln-runner; do
  objcopy --strip-debug "$BUILD_DIR/tools/$exe" "$stage/libexec/$exe"
done

# Every library ldd resolves for either executable, by its soname; the
# CUDA Toolkit's own (NVRTC, nvJitLink) only with --with-cuda-libs.
copy_lib() {  # path soname
  [ -e "$stage/lib/$2" ] && return 0
  cp -L "$1" "$stage/lib/$2"
  chmod u+w "$stage/lib/$2"
  strip --strip-debug "$stage/lib/$2" 2>/dev/null || true
}
loader=""
cuda_sonames=""
for exe in kiln kiln-runner; do
  while read -r name arrow path _; do
    case "$name" in
      linux-vdso.so.*) continue ;;
      /*ld-linux*) loader="$name"; copy_lib "$name" "$(basename "$name")"; continue ;;
    esac
    if [ "$arrow" != "=>" ] || [ ! -e "$path" ]; then
      echo "gpu_bundle: $exe needs $name, which ldd cannot find" >&2
      exit 1
    fi
    case "$name" in
      libnvrtc*|libnvJitLink*)
        case " $cuda_sonames " in *" $name "*) ;; *) cuda_sonames="$cuda_sonames $name" ;; esac
        if [ "$with_cuda_libs" = 1 ]; then
          copy_lib "$path" "$name"
          # NVRTC opens its builtins by name at run time (ldd does not see it).
          for b in "$(dirname "$path")"/libnvrtc-builtins.so.*.*; do
            [ -e "$b" ] && copy_lib "$b" "$(basename "$b")"
          done
        fi
        continue ;;
    esac
    copy_lib "$path" "$name"
  done < <(ldd "$BUILD_DIR/tools/$exe")
done
[ -n "$loader" ] || { echo "gpu_bundle: ldd names no dynamic loader" >&2; exit 1; }
cuda_sonames="${cuda_sonames# }"

# The commands: the bundled loader runs each executable with lib/ (and the
# CUDA Toolkit's folder when the CUDA libraries are not bundled). kiln finds
# its runner through KILN_RUNNER (not next to /proc/self/exe, which is the
# loader here).
loader_name="$(basename "$loader")"
for exe in kiln kiln-runner; do
  {
    cat <<WRAP
#!/bin/sh
# Runs the bundled $exe with the bundle's own libraries (scripts/gpu_bundle.sh).
here="\$(cd "\$(dirname "\$0")/.." && pwd)"
export KILN_RUNNER="\$here/bin/kiln-runner"
libs="\$here/lib"
WRAP
    if [ "$exe" = kiln ] && [ "$with_cuda_libs" = 0 ] && [ -n "$cuda_sonames" ]; then
      cat <<WRAP
# NVRTC and nvJitLink come from this machine's CUDA Toolkit.
need="$cuda_sonames"
cuda_lib=""
nvcc_dir="\$(dirname "\$(command -v nvcc 2>/dev/null || echo /nonexistent/nvcc)")"
for d in "\${KILN_CUDA_LIB:-}" "\${CUDA_HOME:-/nonexistent}/lib64" "\$nvcc_dir/../lib64" \\
         "\$nvcc_dir/../lib" /usr/local/cuda/lib64 /usr/local/cuda/lib; do
  [ -n "\$d" ] || continue
  ok=1
  for so in \$need; do [ -e "\$d/\$so" ] || ok=0; done
  if [ "\$ok" = 1 ]; then cuda_lib="\$d"; break; fi
done
if [ -z "\$cuda_lib" ]; then
  echo "kiln (bundle): this machine has no CUDA Toolkit with \$need (a CUDA 13 toolkit); set KILN_CUDA_LIB to the folder holding them" >&2
  exit 1
fi
libs="\$libs:\$cuda_lib"
WRAP
    fi
    cat <<WRAP
exec "\$here/lib/$loader_name" --library-path "\$libs" "\$here/libexec/$exe" "\$@"
WRAP
  } >"$stage/bin/$exe"
  chmod +x "$stage/bin/$exe"
done
cat >"$stage/README" <<'TXT'
Kiln, self-contained (scripts/gpu_bundle.sh): bin/kiln is the command. From
the machine it takes the CUDA driver (libcuda.so.1) and, unless the bundle was
made with --with-cuda-libs, the CUDA Toolkit's NVRTC and nvJitLink.
TXT

archive="$OUT_DIR/kiln-gpu.tar.xz"
rm -f "$archive"
echo "gpu_bundle: $(du -sh "$stage" | cut -f1) unpacked; compressing (xz -9) ..."
# 64 MiB blocks: compressed in parallel, at ~1% more size than one stream.
tar -C "$OUT_DIR/stage" -cf - kiln-gpu |
  xz -9 -T"${KILN_BUNDLE_THREADS:-2}" --block-size=64MiB >"$archive"
rm -rf "$OUT_DIR/stage"
bytes=$(stat -c %s "$archive")
echo "gpu_bundle: $archive: $bytes bytes ($((bytes / 1048576)) MiB)"
if [ "$bytes" -gt $((60 * 1048576)) ]; then
  echo "gpu_bundle: warning: larger than 60 MiB; at most 64 MiB of the checkout travels to the GPU machine" >&2
fi
if [ "${KILN_BUNDLE_NO_CHECK:-0}" != 1 ]; then
  bash scripts/gpu_bundle_check.sh "$archive"
fi
