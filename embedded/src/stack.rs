//! Stack high-water mark by painting: fill the stack below the caller with a
//! pattern, run the work, then find the lowest word that changed.

use core::arch::asm;
use core::ptr::{read_volatile, write_volatile};

const PATTERN: u32 = 0xA5C3_5A3C;
/// How far below the caller's frame the stack is painted. The measured work
/// must stay within it: a result equal to it means "at least this".
pub const PAINT: usize = 128 * 1024;
/// Left unpainted just below the caller, for `paint`'s own frame.
const GUARD: usize = 256;

/// The current stack pointer.
#[inline(always)]
fn sp() -> usize {
    let sp: usize;
    // SAFETY: reads a register.
    unsafe { asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

#[inline(never)]
fn paint(lo: usize, hi: usize) {
    let mut a = lo;
    while a < hi {
        // SAFETY: lo..hi is unused stack below the live frames (the callers
        // checked that it lies in RAM reserved for the stack).
        unsafe { write_volatile(a as *mut u32, PATTERN) };
        a += 4;
    }
}

/// Calls `f` in a frame of its own, below `measure`'s: were `f` inlined
/// into `measure`, its locals would sit above the measured range.
#[inline(never)]
fn call<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Runs `f` and returns its result with the bytes of stack it used below
/// this function's frame (its own frames, the demuxer and sources it holds
/// as locals, and everything they call). The returned `R` itself is stored
/// by the caller and not counted.
#[inline(never)]
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let top = sp() & !15;
    let lo = top - PAINT;
    paint(lo, top - GUARD);
    let r = call(f);
    let mut a = lo;
    // SAFETY: the same painted range, now below the live frames again.
    while a < top - GUARD && unsafe { read_volatile(a as *const u32) } == PATTERN {
        a += 4;
    }
    (r, top - a)
}
