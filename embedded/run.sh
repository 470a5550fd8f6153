#!/usr/bin/env bash
# Builds the mediaslice firmware images, runs them under QEMU and checks every
# line against the host CLI (`mediaslice packets --summary`), then checks the
# flash, stack and state budgets. Installs what a fresh Debian/Ubuntu machine
# lacks first (rustup targets, or Debian's rustc-web + build-std; QEMU;
# binutils for the size measurements). Idempotent; exits non-zero on any
# mismatch, failure or budget overrun.
#
#   embedded/run.sh            # the images, compare, budgets
#   embedded/run.sh --sizes    # also .text/.rodata and state per format family
#   embedded/run.sh --no-defmt # skip the third image (Cortex-M4 with defmt
#                              # logging and core's `defmt` feature)
#
# Images: m4 (thumbv7em, mps2-an386), a53 (aarch64, virt), m4-defmt (m4 with
# defmt logging over semihosting; its frames are decoded when defmt-print is
# on PATH or in embedded/target/tools/bin); rec-m4 and rec-a53 (feature
# `recorder`: fragmented MP4 written to RAM and to run/rec-*/recorder.mp4,
# compared byte for byte with the host twin examples/record_host.rs).
#
# Environment: MEDIASLICE=/path/to/mediaslice (host CLI; default: build it),
# HOST_TARGET_DIR (where to build it; default the workspace's target/),
# JOBS (cargo -j; default cargo's), QEMU_TIMEOUT (seconds per run, default 120),
# NO_INSTALL=1 (never install anything).
set -euo pipefail

# ---- budgets (see docs/embedded.md) -------------------------------------
# Flash for all formats together on thumbv7em: .vector_table + .text +
# .rodata + .data of an image with every format, no corpus and one Source
# type (ReaderSource), as a firmware has it; harness included; opt-level "s"
# (the "z" figure is printed beside it), LTO, core's few-tracks and
# compact-crc features. The issue's target, enforced: 256 KiB.
FLASH_BUDGET=${FLASH_BUDGET:-262144}
# Stack high-water mark on thumbv7em, open + every packet with the demuxer
# held as a local, both modes. Measured 35 KiB (slice) and 49 KiB (reader)
# with 7 formats when written; a ratchet against regressions, not a target.
STACK_BUDGET=${STACK_BUDGET:-65536}
# size_of::<AnyDemuxer>() on thumbv7em: the largest format's own state
# (few-tracks). The issue's target, enforced: 4 KiB.
STATE_BUDGET=${STATE_BUDGET:-4096}
# The recorder images: size_of the fragmented MP4 writer (Muxer with its
# context) for 2 tracks, few-tracks. The issue's target, enforced: 8 KiB.
RECORDER_STATE_BUDGET=${RECORDER_STATE_BUDGET:-8192}

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
JOBS=${JOBS:-}
QEMU_TIMEOUT=${QEMU_TIMEOUT:-120}
SIZES=0
DEFMT=1
for a in "$@"; do
  case "$a" in
    --sizes) SIZES=1 ;;
    --no-defmt) DEFMT=0 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

M4=thumbv7em-none-eabihf
A53=aarch64-unknown-none
FW_TARGET_DIR="$HERE/target"
IMAGES="$FW_TARGET_DIR/images"
OUT="$FW_TARGET_DIR/run"
mkdir -p "$IMAGES" "$OUT"
start=$(date +%s)
step() { echo "== $* ($(($(date +%s) - start))s)"; }
die() { echo "run.sh: $*" >&2; exit 1; }

# ---- install what is missing ---------------------------------------------
SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
APT_UPDATED=0
apt_install() {
  [ "${NO_INSTALL:-0}" = 1 ] && die "missing $*, and NO_INSTALL=1"
  command -v apt-get >/dev/null || die "missing $*, and no apt-get to install it"
  if [ "$APT_UPDATED" = 0 ]; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    APT_UPDATED=1
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

step "tools"
need=()
command -v qemu-system-arm >/dev/null || need+=(qemu-system-arm)
command -v arm-none-eabi-size >/dev/null || need+=(binutils-arm-none-eabi)
command -v aarch64-linux-gnu-size >/dev/null || need+=(binutils-aarch64-linux-gnu)
[ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"
if ! command -v qemu-system-aarch64 >/dev/null; then
  # Debian and Ubuntu ship it in qemu-system-arm; some releases split it out.
  apt_install qemu-system-aarch64 || apt_install qemu-system-misc || true
fi
command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 not found after installing"

# Rust: rustup targets, or Debian's rustc-web with core built from source.
BUILD_STD=()
if command -v rustup >/dev/null && rustup target add "$M4" "$A53" >/dev/null 2>&1; then
  echo "rustup: targets $M4 $A53 installed"
else
  echo "rustup cannot add the targets: Debian rustc-web with -Zbuild-std=core"
  if ! { command -v cargo >/dev/null && [ -d "$(rustc --print sysroot)/lib/rustlib/src/rust/library/core" ]; }; then
    apt_install rustc-web cargo-web rust-web-src
    hash -r
  fi
  export RUSTC_BOOTSTRAP=1
  BUILD_STD=(-Zbuild-std=core -Zbuild-std-features=compiler-builtins-mem)
  # No rust-lld in Debian's rustc: link with GNU ld from the binutils above.
  export CARGO_TARGET_THUMBV7EM_NONE_EABIHF_LINKER=arm-none-eabi-ld
  export CARGO_TARGET_AARCH64_UNKNOWN_NONE_LINKER=aarch64-linux-gnu-ld
fi
cargo --version
qemu-system-arm --version | head -1

# ---- host reference ---------------------------------------------------------
if [ -z "${MEDIASLICE:-}" ]; then
  step "host CLI (mediaslice-std)"
  HOST_TARGET_DIR=${HOST_TARGET_DIR:-$ROOT/target}
  (cd "$ROOT" && CARGO_TARGET_DIR="$HOST_TARGET_DIR" cargo build -q --release ${JOBS:+-j$JOBS} -p mediaslice-std --bin mediaslice)
  MEDIASLICE="$HOST_TARGET_DIR/release/mediaslice"
fi
[ -x "$MEDIASLICE" ] || die "host CLI $MEDIASLICE not found"

# ---- firmware -----------------------------------------------------------------
# Source paths in the images (panic locations of the overflow checks) are
# made relative to core/src, embedded/ and cargo/: a firmware carries no
# build machine's paths, and the flash figure does not depend on where the
# checkout lies (an absolute /check/work/main/core/src/ prefix on 85 files
# was 2 KB of .rodata).
export RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$ROOT/core/src/= --remap-path-prefix=$HERE/=embedded/ --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}/=cargo/"

# build NAME TARGET CARGO-ARGS...: builds and copies the ELF to images/NAME.elf
build() {
  local name=$1 target=$2
  shift 2
  (cd "$HERE" && CARGO_TARGET_DIR="$FW_TARGET_DIR" cargo build -q --release ${JOBS:+-j$JOBS} \
    --target "$target" ${BUILD_STD[@]+"${BUILD_STD[@]}"} "$@")
  cp "$FW_TARGET_DIR/$target/release/mediaslice-embedded" "$IMAGES/$name.elf"
}

# qemu NAME TARGET: runs images/NAME.elf; semihosting text -> run/NAME.txt,
# raw stdout (defmt frames) -> run/NAME.bin. Returns QEMU's status.
qemu() {
  local name=$1 target=$2 elf="$IMAGES/$1.elf"
  local rc=0
  case "$target" in
    "$M4") timeout "$QEMU_TIMEOUT" qemu-system-arm -machine mps2-an386 -cpu cortex-m4 \
      -nographic -monitor none -serial none -semihosting-config enable=on,target=native \
      -kernel "$elf" >"$OUT/$name.bin" 2>"$OUT/$name.txt" || rc=$? ;;
    "$A53") timeout "$QEMU_TIMEOUT" qemu-system-aarch64 -machine virt -cpu cortex-a53 -m 128M \
      -nographic -monitor none -serial none -nic none -semihosting-config enable=on,target=native \
      -kernel "$elf" >"$OUT/$name.bin" 2>"$OUT/$name.txt" || rc=$? ;;
  esac
  [ "$rc" = 124 ] && echo "$name: QEMU timed out after ${QEMU_TIMEOUT}s" >&2
  return "$rc"
}

# section ELF NAME [SIZE-TOOL]: the size of one section (0 when absent)
section() { "${3:-arm-none-eabi-size}" -A "$1" | awk -v s="$2" '$1 == s { print $2; f = 1 } END { if (!f) print 0 }'; }
# flash ELF: vector table + text + rodata + data (what a Cortex-M keeps in flash)
flash() { echo $(($(section "$1" .vector_table) + $(section "$1" .text) + $(section "$1" .rodata) + $(section "$1" .data))); }

step "build $M4 image"
build m4 "$M4"
step "build $A53 image"
build a53 "$A53"
step "build $M4 flash-measurement images (all formats, ReaderSource only, no corpus; opt-level s and z)"
build flash "$M4" --no-default-features --features formats,one-source
# The budget is enforced on the opt-level "s" build (the issue's profile);
# the "z" build is measured beside it for firmware that optimises for size.
(cd "$HERE" && CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_TARGET_DIR="$FW_TARGET_DIR/z" cargo build -q --release \
  ${JOBS:+-j$JOBS} --target "$M4" ${BUILD_STD[@]+"${BUILD_STD[@]}"} --no-default-features --features formats,one-source)
cp "$FW_TARGET_DIR/z/$M4/release/mediaslice-embedded" "$IMAGES/flash-z.elf"
IMGS="m4:$M4 a53:$A53"
if [ "$DEFMT" = 1 ]; then
  step "build $M4 image with defmt"
  build m4-defmt "$M4" --features defmt
  IMGS="$IMGS m4-defmt:$M4"
fi

FAIL=0
# kv NAME KEY: the number after KEY= in run/NAME.txt
kv() { sed -n "s/.*[# ]$2=\([0-9]*\).*/\1/p" "$OUT/$1.txt" | head -1; }
declare -A HOST
host_summary() {
  local f=$1
  if [ -z "${HOST[$f]+x}" ]; then
    local line
    line=$("$MEDIASLICE" packets --summary "$ROOT/corpus/files/$f") || line="host-error"
    if [[ $line =~ \"packets\":\ *([0-9]+),\ *\"bytes\":\ *([0-9]+),\ *\"crc32\":\ *\"([0-9a-f]{8})\" ]]; then
      HOST[$f]="${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"
    else
      HOST[$f]="? ? ?"
    fi
  fi
  echo "${HOST[$f]}"
}

# check NAME: compares every result line of run/NAME.txt with the host.
check() {
  local name=$1 txt="$OUT/$1.txt" n=0 files
  files=$(sed -n 's/^# files=\([0-9]*\).*/\1/p' "$txt")
  [ -n "$files" ] || { echo "$name: no '# files=' line: the image did not run"; FAIL=1; return; }
  while read -r file rest; do
    case "$file" in '#'* | '') continue ;; esac
    if [[ $rest =~ ^packets=([0-9]+)\ crc32=([0-9a-f]{8})\ via=([a-z]+)\ bytes=([0-9]+) ]]; then
      local p=${BASH_REMATCH[1]} c=${BASH_REMATCH[2]} via=${BASH_REMATCH[3]} b=${BASH_REMATCH[4]}
      local hp hb hc
      read -r hp hb hc <<<"$(host_summary "$file")"
      n=$((n + 1))
      if [ "$p $b $c" = "$hp $hb $hc" ]; then
        printf '  ok        %-36s %-6s packets=%s crc32=%s\n' "$file" "$via" "$p" "$c"
      else
        printf '  MISMATCH  %-36s %-6s image: packets=%s bytes=%s crc32=%s  host: packets=%s bytes=%s crc32=%s\n' \
          "$file" "$via" "$p" "$b" "$c" "$hp" "$hb" "$hc"
        FAIL=1
      fi
    else
      echo "  FAILED    $file $rest"
      FAIL=1
    fi
  done <"$txt"
  if [ "$n" != $((2 * files)) ]; then
    echo "$name: $n result lines for $files files (expected two per file)"
    FAIL=1
  fi
}

for img in $IMGS; do
  name=${img%%:*} target=${img#*:}
  step "run $name ($target) under QEMU"
  if ! qemu "$name" "$target"; then
    echo "$name: QEMU exited non-zero; its output:"
    sed 's/^/  | /' "$OUT/$name.txt"
    FAIL=1
  fi
  grep '^#' "$OUT/$name.txt" | sed 's/^/  /' || true
  check "$name"
  if [ "$name" = m4-defmt ]; then
    PRINT=$(command -v defmt-print || echo "$FW_TARGET_DIR/tools/bin/defmt-print")
    if [ -x "$PRINT" ]; then
      "$PRINT" -e "$IMAGES/m4-defmt.elf" <"$OUT/m4-defmt.bin" | sed 's/^/  | /'
    else
      echo "  $(stat -c %s "$OUT/m4-defmt.bin") bytes of defmt frames in $OUT/m4-defmt.bin; to read them:"
      echo "  cargo install defmt-print && defmt-print -e $IMAGES/m4-defmt.elf < $OUT/m4-defmt.bin"
    fi
    [ -s "$OUT/m4-defmt.bin" ] || { echo "  m4-defmt: no defmt frames"; FAIL=1; }
  fi
done

# ---- the recorder (feature recorder, src/recorder.rs) -------------------------
# Each image records the H.264 and AAC clips as fragmented MP4, then as hybrid
# MP4, into RAM, reads each back, and writes them to recorder.mp4 and
# recorder-hybrid.mp4 in QEMU's working directory. The host
# twin (examples/record_host.rs) runs the same src/record.rs: the files must be
# equal byte for byte, the host CLI must read what the image read back, and
# ffprobe (when installed) must count the packets the image wrote.
step "build the recorder images ($M4, $A53) and their host twin"
build rec-m4 "$M4" --no-default-features --features recorder
build rec-a53 "$A53" --no-default-features --features recorder
HOST_TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
(cd "$HERE" && CARGO_TARGET_DIR="$FW_TARGET_DIR" cargo build -q --release ${JOBS:+-j$JOBS} \
  --target "$HOST_TRIPLE" --no-default-features --features recorder --example record_host)
rm -rf "${OUT:?}/rec-host" && mkdir -p "$OUT/rec-host"
if ! "$FW_TARGET_DIR/$HOST_TRIPLE/release/examples/record_host" "$OUT/rec-host" >"$OUT/rec-host.txt"; then
  echo "  the host twin failed:"; sed 's/^/  | /' "$OUT/rec-host.txt"; FAIL=1
fi
# top_boxes FILE: the types of its top-level boxes, space-separated
top_boxes() {
  python3 -c 'import struct,sys
b=open(sys.argv[1],"rb").read(); o=0; t=[]
while o+8<=len(b):
    n,k=struct.unpack(">I4s",b[o:o+8])
    n=struct.unpack(">Q",b[o+8:o+16])[0] if n==1 else (len(b)-o if n==0 else n)
    t.append(k.decode("latin-1")); o+=max(n,8)
print(" ".join(t))' "$1"
}
for img in rec-m4:$M4 rec-a53:$A53; do
  name=${img%%:*} target=${img#*:}
  step "run $name ($target) under QEMU"
  rm -rf "${OUT:?}/$name" && mkdir -p "$OUT/$name"
  if ! (cd "$OUT/$name" && qemu "$name" "$target"); then
    echo "$name: QEMU exited non-zero; its output:"; sed 's/^/  | /' "$OUT/$name.txt"; FAIL=1; continue
  fi
  sed 's/^/  /' "$OUT/$name.txt"
  for file in recorder.mp4 recorder-hybrid.mp4; do
    mp4="$OUT/$name/$file"
    [ -s "$mp4" ] || { echo "  $name: no $file written"; FAIL=1; continue; }
    if cmp -s "$mp4" "$OUT/rec-host/$file"; then
      echo "  ok        $name $file equals the host twin's byte for byte ($(stat -c %s "$mp4") bytes)"
    else
      echo "  MISMATCH  $name $file differs from the host twin's"; FAIL=1
    fi
    back=$(sed -n "s/^$file readback packets=\([0-9]*\) bytes=\([0-9]*\) crc32=\([0-9a-f]*\).*/\1 \2 \3/p" "$OUT/$name.txt")
    line=$("$MEDIASLICE" packets --summary "$mp4" || echo host-error)
    host="?"
    if [[ $line =~ \"packets\":\ *([0-9]+),\ *\"bytes\":\ *([0-9]+),\ *\"crc32\":\ *\"([0-9a-f]{8})\" ]]; then
      host="${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"
    fi
    if [ -n "$back" ] && [ "$back" = "$host" ]; then
      echo "  ok        $name $file read back by the image = the host CLI: packets bytes crc32 = $back"
    else
      echo "  MISMATCH  $name $file read back by the image: '$back', by the host CLI: '$host'"; FAIL=1
    fi
    wrote=$(sed -n "s/^$file recorder video=\([0-9]*\) audio=\([0-9]*\).*/\1,\2/p" "$OUT/$name.txt")
    if command -v ffprobe >/dev/null; then
      ff=$(ffprobe -v error -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$mp4" | paste -sd, -)
      if [ "$ff" = "$wrote" ]; then
        echo "  ok        $name $file ffprobe counts the packets written per track: $ff"
      else
        echo "  MISMATCH  $name $file packets written per track $wrote, ffprobe counts $ff"; FAIL=1
      fi
    else
      echo "  (ffprobe not installed: $file is not checked with it)"
    fi
    boxes=$(top_boxes "$mp4")
    case "$file:$boxes" in
      recorder.mp4:"ftyp moov "*"moof mdat mfra") echo "  ok        $name $file layout: ftyp moov (free moof mdat)... mfra" ;;
      recorder-hybrid.mp4:"ftyp free mdat moov") echo "  ok        $name $file layout: ftyp free mdat moov (finished: a progressive MP4)" ;;
      *) echo "  MISMATCH  $name $file top-level boxes: $boxes"; FAIL=1 ;;
    esac
  done
  rstate=$(kv "$name" Muxer)
  if [ -z "$rstate" ] || [ "$rstate" -gt "$RECORDER_STATE_BUDGET" ]; then
    echo "  OVER BUDGET: $name writer state ${rstate:-?} bytes (budget $RECORDER_STATE_BUDGET)"; FAIL=1
  fi
done

# ---- budgets ----------------------------------------------------------------
step "budgets ($M4)"
corpus_bytes=0
for f in $(awk '$4 == "via=slice" { print $1 }' "$OUT/m4.txt"); do
  corpus_bytes=$((corpus_bytes + $(stat -c %s "$ROOT/corpus/files/$f")))
done
m4_flash=$(flash "$IMAGES/m4.elf")
both_flash=$((m4_flash - corpus_bytes))
code_flash=$(flash "$IMAGES/flash.elf")
code_flash_z=$(flash "$IMAGES/flash-z.elf")
stack_hw=$(sed -n 's/^# stack high-water slice=\([0-9]*\) reader=\([0-9]*\).*/\1 \2/p' "$OUT/m4.txt")
stack_slice=${stack_hw% *} stack_reader=${stack_hw#* }
state=$(kv m4 AnyDemuxer)
printf '  flash, all formats, one Source type, opt-level s: %d bytes (.text %d .rodata %d; budget %d)\n' "$code_flash" \
  "$(section "$IMAGES/flash.elf" .text)" "$(section "$IMAGES/flash.elf" .rodata)" "$FLASH_BUDGET"
printf '  flash, all formats, one Source type, opt-level z: %d bytes (.text %d .rodata %d)\n' "$code_flash_z" \
  "$(section "$IMAGES/flash-z.elf" .text)" "$(section "$IMAGES/flash-z.elf" .rodata)"
printf '  flash, all formats, both Source types (m4 image %d - corpus %d): %d bytes\n' "$m4_flash" "$corpus_bytes" "$both_flash"
printf '  m4 image: .text %d  .rodata %d (incl. corpus)  .data %d  .bss %d\n' "$(section "$IMAGES/m4.elf" .text)" \
  "$(section "$IMAGES/m4.elf" .rodata)" "$(section "$IMAGES/m4.elf" .data)" "$(section "$IMAGES/m4.elf" .bss)"
printf '  stack high-water: slice %s, reader %s bytes (budget %d)\n' "$stack_slice" "$stack_reader" "$STACK_BUDGET"
printf '  size_of AnyDemuxer %s bytes (budget %d); Demuxer<SliceSource> %s, Demuxer<ReaderSource> %s\n' \
  "$state" "$STATE_BUDGET" "$(kv m4 'Demuxer<SliceSource>')" "$(kv m4 'Demuxer<ReaderSource>')"
a53=$IMAGES/a53.elf
printf '  (%s: .text %d  .rodata %d incl. corpus)\n' "$A53" "$(section "$a53" .text aarch64-linux-gnu-size)" \
  "$(section "$a53" .rodata aarch64-linux-gnu-size)"
rec_clips=$(($(stat -c %s "$ROOT/corpus/files/h264/baseline.h264") + $(stat -c %s "$ROOT/corpus/files/adts/aac_lc.aac")))
printf '  recorder image (fMP4 and hybrid writer, MP4/H.264/ADTS demuxers, harness): flash %d bytes, of which %d the two clips; writer state %s bytes (budget %d), stack %s, muxer scratch %s (hybrid %s)\n' \
  "$(flash "$IMAGES/rec-m4.elf")" "$rec_clips" "$(kv rec-m4 Muxer)" "$RECORDER_STATE_BUDGET" "$(kv rec-m4 stack)" "$(kv rec-m4 scratch)" "$(kv rec-m4 hybrid_scratch)"
if [ "$code_flash" -gt "$FLASH_BUDGET" ]; then echo "  OVER BUDGET: flash"; FAIL=1; fi
if [ -z "$stack_reader" ] || [ "$stack_reader" -gt "$STACK_BUDGET" ] || [ "$stack_slice" -gt "$STACK_BUDGET" ]; then
  echo "  OVER BUDGET: stack"; FAIL=1
fi
if [ -z "$state" ] || [ "$state" -gt "$STATE_BUDGET" ]; then echo "  OVER BUDGET: demuxer state"; FAIL=1; fi

# ---- per format family (--sizes) ----------------------------------------------
if [ "$SIZES" = 1 ]; then
  step "sizes per format family ($M4, opt-level s, LTO; no corpus; ReaderSource only)"
  families=$(sed -n 's/^formats *= *\[\(.*\)\].*/\1/p' "$HERE/Cargo.toml" | grep -o 'mediaslice/[a-z0-9_-]*' | sed 's,mediaslice/,,')
  first=$(echo "$families" | head -1)
  # Readers left out of the all-formats image (docs/embedded.md says why),
  # measured alone all the same. SIZES_ONLY="au mxf" limits the rows.
  families="$families au tta dsf dff wavpack ape musepack mxf iff"
  [ -n "${SIZES_ONLY:-}" ] && families=$SIZES_ONLY
  row() { # name elf
    local t r d
    t=$(section "$2" .text) r=$(section "$2" .rodata) d=$(section "$2" .data)
    echo "$1 $t $r $d $((t + r + d + $(section "$2" .vector_table)))"
  }
  build baseline "$M4" --no-default-features --features "baseline,one-source,mediaslice/$first"
  read -r _ bt br _ bf <<<"$(row baseline "$IMAGES/baseline.elf")"
  printf '  %-10s %8s %8s %8s %10s %12s\n' family .text .rodata flash "Δ flash" "AnyDemuxer"
  printf '  %-10s %8d %8d %8d %10s %12s\n' "(harness)" "$bt" "$br" "$bf" - -
  cp "$IMAGES/flash.elf" "$IMAGES/size-all.elf"
  for fam in $families all; do
    [ "$fam" = all ] || build "size-$fam" "$M4" --no-default-features --features "one-source,mediaslice/$fam"
    qemu "size-$fam" "$M4" || true
    read -r _ t r _ f <<<"$(row "$fam" "$IMAGES/size-$fam.elf")"
    printf '  %-10s %8d %8d %8d %10d %12s\n' "$fam" "$t" "$r" "$f" $((f - bf)) "$(kv "size-$fam" AnyDemuxer)"
  done
  # The same all-formats image at opt-level "z" (built above).
  cp "$IMAGES/flash-z.elf" "$IMAGES/size-all-z.elf"
  read -r _ t r _ f <<<"$(row all-z "$IMAGES/size-all-z.elf")"
  printf '  %-10s %8d %8d %8d %10d %12s\n' "all (z)" "$t" "$r" "$f" $((f - bf)) -
fi

step "done"
if [ "$FAIL" != 0 ]; then
  echo "embedded: FAILED"
  exit 1
fi
echo "embedded: both images match the host; both recorder images match their host twin"
