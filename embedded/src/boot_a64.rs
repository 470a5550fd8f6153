//! Boot for QEMU `virt` with a Cortex-A53, entered at `_start` in EL1 with
//! the MMU off (QEMU `-kernel` with an ELF).
//!
//! Sets the stack, enables FP/SIMD (Rust code for aarch64-unknown-none uses
//! it), installs exception vectors that report and exit, zeroes .bss, and
//! turns the MMU on with an identity map (1 GiB blocks: device memory below
//! 0x4000_0000, normal write-back memory for RAM) so that unaligned accesses
//! are allowed as the compiler assumes; then calls `rust_main`.

use core::arch::global_asm;

global_asm!(
    r#"
    .section .text.boot, "ax"
    .global _start
_start:
    mrs     x0, CurrentEL
    lsr     x0, x0, #2
    cmp     x0, #1
    b.ne    not_el1

    adrp    x0, __stack_top
    add     x0, x0, :lo12:__stack_top
    mov     sp, x0

    mov     x0, #(3 << 20)          // CPACR_EL1.FPEN: no FP/SIMD traps
    msr     cpacr_el1, x0
    isb

    adrp    x0, vectors
    add     x0, x0, :lo12:vectors
    msr     vbar_el1, x0

    adrp    x0, __bss_start
    add     x0, x0, :lo12:__bss_start
    adrp    x1, __bss_end
    add     x1, x1, :lo12:__bss_end
1:  cmp     x0, x1
    b.hs    2f
    str     xzr, [x0], #8
    b       1b
2:
    // Level-1 table, 4 KiB granule, 39-bit VA: entry n maps n GiB.
    adrp    x0, __l1_table
    add     x0, x0, :lo12:__l1_table
    mov     x1, x0
    add     x2, x0, #4096
3:  str     xzr, [x1], #8
    cmp     x1, x2
    b.lo    3b
    mov     x1, #0x0401             // 0 GiB: block, AF, AttrIndx 0 (device)
    str     x1, [x0]
    mov     x1, #0x0705             // 1 GiB: block, AF, inner shareable, AttrIndx 1 (normal)
    movk    x1, #0x4000, lsl #16
    str     x1, [x0, #8]
    msr     ttbr0_el1, x0
    mov     x1, #0xff00             // MAIR: attr0 device nGnRnE, attr1 normal WB
    msr     mair_el1, x1
    mov     x1, #0x3519             // TCR: T0SZ 25, WB WA walks, inner shareable
    movk    x1, #0x0080, lsl #16    //      EPD1: no TTBR1 walks
    movk    x1, #0x0001, lsl #32    //      IPS 36 bits
    msr     tcr_el1, x1
    isb
    tlbi    vmalle1
    dsb     ish
    isb
    mrs     x1, sctlr_el1
    orr     x1, x1, #(1 << 0)       // M: MMU on
    orr     x1, x1, #(1 << 2)       // C: data cache
    orr     x1, x1, #(1 << 12)      // I: instruction cache
    bic     x1, x1, #(1 << 1)       // A: no alignment checks
    msr     sctlr_el1, x1
    isb

    bl      rust_main
4:  wfe
    b       4b

not_el1:
    // Semihosting SYS_EXIT with a failure: this boot code expects EL1.
    adrp    x1, exit_block_fail
    add     x1, x1, :lo12:exit_block_fail
    mov     x0, #0x18
    hlt     #0xf000
    b       not_el1

    .section .rodata.boot, "a"
    .balign 8
exit_block_fail:
    .quad   0x20023, 2

    .section .text.vectors, "ax"
    .balign 2048
vectors:
    .set    i, 0
    .rept   16
    .balign 128
    mov     x0, #i
    b       exception
    .set    i, i + 1
    .endr

exception:
    mrs     x1, esr_el1
    mrs     x2, elr_el1
    mrs     x3, far_el1
    adrp    x4, __stack_top         // a fresh stack: the old one may be the fault
    add     x4, x4, :lo12:__stack_top
    mov     sp, x4
    bl      rust_exception
5:  b       5b
"#
);

/// Called by the vectors: report the exception and exit with a failure.
#[no_mangle]
extern "C" fn rust_exception(vector: u64, esr: u64, elr: u64, far: u64) -> ! {
    crate::semihosting::Line::new()
        .s("exception: vector ")
        .u(vector)
        .s(" ESR_EL1=0x")
        .x(esr, 1)
        .s(" ELR_EL1=0x")
        .x(elr, 1)
        .s(" FAR_EL1=0x")
        .x(far, 1)
        .flush();
    crate::semihosting::exit(false)
}

/// Called by `_start`.
#[no_mangle]
extern "C" fn rust_main() -> ! {
    crate::semihosting::exit(crate::run())
}
