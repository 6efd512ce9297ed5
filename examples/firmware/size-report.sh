#!/usr/bin/env bash
# Size report of the firmware kernels: l1 (code, read-only data and data's initial values, all
# in L1), data and bss (local RAM; data's initial values are counted in l1 too), l1 against
# the project's budget: reader and writer 24 KiB, compute 8 KiB (issue 15; under the older
# Blackhole map's 48 KiB BRISC, 24 KiB NCRISC and 24 KiB TRISC, and a small share of tt-metal's
# kernel-configuration area of ~69 KiB for a tile's kernels: tt-metal dev_mem_map.h,
# docs/blackhole.md#code-size-limits). A kernel over its
# budget is flagged OVER and the script exits 1, which fails CI.
# Reads section headers with readelf, which reads any ELF whatever the machine.
# It also fails when an image carries panic code (a `core::panicking` symbol: a bounds check,
# an unwrap or an overflow the compiler could not rule out): the firmware must not panic on any
# input, and the formatting a panic pulls in costs some 1.3 KiB (a Wormhole image went over its
# budget that way, decisions D38).
# Usage: size-report.sh [TARGET_DIR]: the images of `cargo build --release` (target/), or of a
# build into TARGET_DIR (the Wormhole images:
# `--features wormhole --config wormhole.toml --target-dir target/wormhole`).
# The budgets are the same for both chips.
set -euo pipefail
cd "$(dirname "$0")"
dir=${1:-target}/riscv32im-unknown-none-elf/release
echo "images: $dir"
printf '%-8s %8s %8s %8s %8s %8s\n' kernel l1 data bss budget left
over=0
for kernel in reader writer compute; do
  if [ ! -f "$dir/$kernel" ]; then
    echo "size-report: $dir/$kernel is missing: build the firmware first (cargo build --release)" >&2
    exit 1
  fi
  # Command substitutions, not process substitutions: under `set -e` a readelf that is missing
  # or cannot read the image fails the script here instead of reading as an empty image.
  sections=$(readelf -SW "$dir/$kernel")
  read -r text data bss < <(printf '%s\n' "$sections" | python3 -c '
import sys, re
t = d = b = 0
seen = False
for line in sys.stdin:
    m = re.search(r"\]\s+(\.\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
    if not m: continue
    name, size = m.group(1), int(m.group(2), 16)
    if name in (".text", ".rodata"): t += size
    elif name == ".data": d += size
    elif name == ".bss": b += size
    seen = seen or (name == ".text" and size > 0)
print(t if seen else -1, d, b)')
  if [ "$text" -lt 0 ]; then
    echo "size-report: $dir/$kernel has no .text section readelf could read" >&2
    exit 1
  fi
  # `.data`'s initial values are stored in L1 after `.rodata` (`link/common.ld`: `AT > CODE`),
  # so they count against the budget with the code.
  text=$((text + data))
  budget=$([ "$kernel" = compute ] && echo 8192 || echo 24576)
  flag=""
  if [ "$text" -gt "$budget" ]; then flag=" OVER"; over=1; fi
  printf '%-8s %8d %8d %8d %8d %8d%s\n' "$kernel" "$text" "$data" "$bss" "$budget" "$((budget - text))" "$flag"
  symbols=$(readelf -sW "$dir/$kernel")
  panics=$(printf '%s\n' "$symbols" | grep -c 'panicking' || true)
  if [ "$panics" -ne 0 ]; then
    echo "size-report: $dir/$kernel carries panic code ($panics core::panicking symbols, readelf -sW)" >&2
    over=1
  fi
done
if [ "$over" -ne 0 ]; then
  echo "size-report: a kernel is over its budget of text, rodata and data's initial values (see OVER above) or carries panic code" >&2
  exit 1
fi
