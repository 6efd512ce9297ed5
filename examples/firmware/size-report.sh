#!/usr/bin/env bash
# Size report of the firmware kernels: text (code + read-only data, in L1), data, bss (local
# RAM), against the budget (reader and writer 8 KiB of text, compute 4 KiB). Over-budget kernels
# are flagged OVER; the report does not fail the build (the images fit their L1 regions, which
# the linker checks). Reads section headers with readelf, which reads any
# ELF whatever the machine.
set -euo pipefail
cd "$(dirname "$0")"
dir=target/riscv32im-unknown-none-elf/release
printf '%-8s %8s %8s %8s %8s\n' kernel text data bss budget
for kernel in reader writer compute; do
  if [ ! -f "$dir/$kernel" ]; then
    echo "size-report: $dir/$kernel is missing: build the firmware first (cargo build --release)" >&2
    exit 1
  fi
  read -r text data bss < <(readelf -SW "$dir/$kernel" | python3 -c '
import sys, re
t = d = b = 0
for line in sys.stdin:
    m = re.search(r"\]\s+(\.\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
    if not m: continue
    name, size = m.group(1), int(m.group(2), 16)
    if name in (".text", ".rodata"): t += size
    elif name == ".data": d += size
    elif name == ".bss": b += size
print(t, d, b)')
  budget=$([ "$kernel" = compute ] && echo 4096 || echo 8192)
  flag=""
  if [ "$text" -gt "$budget" ]; then flag=" OVER"; fi
  printf '%-8s %8d %8d %8d %8d%s\n' "$kernel" "$text" "$data" "$bss" "$budget" "$flag"
done
