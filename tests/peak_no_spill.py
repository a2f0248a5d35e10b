#!/usr/bin/env python3
"""ctest peak_no_spill: no FMA peak kernel may touch memory inside its loop.

    peak_no_spill.py OBJDUMP BINARY

A peak loop that reloads an accumulator from the stack measures the stack,
not the FMA units (that is how the AVX2 peak once under-read a Zen 3 by
1.75x). Disassembles every attn_peak_fma_<isa>_c<chains> function, finds
its loop (the backward conditional jump) and fails on any instruction in
the loop body with a memory operand, or when a kernel has no loop or fewer
FMA (scalar: multiply; avx512bf16: vdpbf16ps) instructions in its loop
than it has chains, or a scalar loop whose multiplies and adds are
interleaved instead of grouped.
"""
import re
import subprocess
import sys

FUNC = re.compile(r"^[0-9a-f]+ <(attn_peak_fma_(\w+?)_c(\d+))>:$")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
JUMP = re.compile(r"^j\w+$")


def functions(text):
    """{name: (isa, chains, [(address, mnemonic, operands)])}"""
    out, current = {}, None
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            current = out.setdefault(m.group(1), (m.group(2), int(m.group(3)), []))
            continue
        if not line.strip():
            current = None
            continue
        m = INSN.match(line)
        if current is not None and m:
            current[2].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return out


def check(name, isa, chains, insns):
    loops = []
    for i, (addr, mnem, ops) in enumerate(insns):
        if JUMP.match(mnem) and mnem != "jmp":
            target = re.match(r"([0-9a-f]+)", ops)
            if target and int(target.group(1), 16) < addr:
                loops.append((int(target.group(1), 16), addr))
    if not loops:
        return [f"{name}: no loop found"]
    start, end = max(loops, key=lambda r: r[1] - r[0])
    body = [(a, m, o) for a, m, o in insns if start <= a <= end]
    errors = [f"{name}: memory operand in the loop at {a:x}: {m} {o}" for a, m, o in body
              if "(" in o and not JUMP.match(m)]
    arith = {"scalar": "mulss", "avx512bf16": "vdpbf16ps"}.get(isa, "vfmadd")
    count = sum(1 for _, m, _ in body if m.startswith(arith))
    if count < chains:
        errors.append(f"{name}: {count} {arith} in the loop, want >= {chains}")
    if isa == "scalar":
        # Every multiply of a round before every add, as the reference asm
        # kernel issues them: gcc's interleaved mul/add pairs ran ~15 %
        # below it on a Zen 4, so the scalar roof was not an upper bound.
        order = [m for _, m, _ in body if m in ("mulss", "addss")]
        if "addss" in order and "mulss" in order[order.index("addss"):]:
            errors.append(f"{name}: a mulss after an addss in the loop: "
                          "the round is not grouped (all multiplies, then all adds)")
    return errors


def main(objdump, binary):
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", binary], check=True,
                          capture_output=True, text=True).stdout
    funcs = functions(text)
    if not funcs:
        print("no attn_peak_fma_* kernels found in", binary)
        return 1
    errors = []
    for name, (isa, chains, insns) in sorted(funcs.items()):
        errs = check(name, isa, chains, insns)
        print(("FAIL " if errs else "ok   ") + f"{name}: {len(insns)} instructions")
        errors += errs
    for e in errors:
        print(e)
    print(f"peak_no_spill: {len(funcs) - len({e.split(':')[0] for e in errors})} passed, "
          f"{len({e.split(':')[0] for e in errors})} failed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
