//! Arm semihosting, just the calls the image needs: write a string to the
//! host console, write bytes to the host's stdout (defmt frames), and exit
//! with a status. No crate: one `bkpt`/`hlt` instruction per call.
//!
//! The host side is QEMU's `-semihosting-config enable=on,target=native`.

use core::arch::asm;

#[cfg(any(feature = "defmt", feature = "recorder"))]
const SYS_OPEN: usize = 0x01;
#[cfg(feature = "recorder")]
const SYS_CLOSE: usize = 0x02;
const SYS_WRITE0: usize = 0x04;
#[cfg(any(feature = "defmt", feature = "recorder"))]
const SYS_WRITE: usize = 0x05;
const SYS_EXIT: usize = 0x18;
/// `ADP_Stopped_ApplicationExit`: a normal exit.
const ADP_STOPPED_APPLICATION_EXIT: usize = 0x20026;
/// `ADP_Stopped_RunTimeErrorUnknown`: QEMU exits with status 1.
const ADP_STOPPED_RUN_TIME_ERROR: usize = 0x20023;

/// One semihosting call: operation `op` with parameter `arg` (a value or a
/// pointer to a parameter block, depending on the operation).
///
/// # Safety
/// `arg` must be what `op` expects; a pointer must be valid for the call.
#[cfg(target_arch = "arm")]
unsafe fn call(op: usize, arg: usize) -> usize {
    let r: usize;
    // Thumb (M profile): BKPT 0xAB.
    asm!("bkpt #0xab", inout("r0") op => r, in("r1") arg, options(nostack, preserves_flags));
    r
}

/// One semihosting call (A64: HLT 0xF000).
///
/// # Safety
/// `arg` must be what `op` expects; a pointer must be valid for the call.
#[cfg(target_arch = "aarch64")]
unsafe fn call(op: usize, arg: usize) -> usize {
    let r: usize;
    asm!("hlt #0xf000", inout("x0") op => r, in("x1") arg, options(nostack, preserves_flags));
    r
}

/// Writes `s` to the host console (SYS_WRITE0 on a NUL-terminated copy,
/// in pieces of at most 255 bytes).
pub fn write_str(s: &str) {
    let mut buf = [0u8; 256];
    for piece in s.as_bytes().chunks(255) {
        let (head, tail) = buf.split_at_mut(piece.len());
        head.copy_from_slice(piece);
        tail[0] = 0;
        // SAFETY: buf is NUL-terminated and lives across the call.
        unsafe {
            call(SYS_WRITE0, buf.as_ptr() as usize);
        }
    }
}

/// Opens the host's standard output (`:tt` in mode "w"): a handle for
/// [`write_bytes`], or `None` when the host refuses.
#[cfg(feature = "defmt")]
pub fn open_stdout() -> Option<usize> {
    let name = b":tt\0";
    let block: [usize; 3] = [name.as_ptr() as usize, 4, 3];
    // SAFETY: the block and the name live across the call.
    let h = unsafe { call(SYS_OPEN, block.as_ptr() as usize) };
    (h != usize::MAX).then_some(h)
}

/// Creates (or truncates) the host file `name` (NUL-terminated; relative
/// to QEMU's working directory) for binary writing, mode "wb": a handle for
/// [`write_bytes`] and [`close`], or `None` when the host refuses.
#[cfg(feature = "recorder")]
pub fn create(name: &core::ffi::CStr) -> Option<usize> {
    let block: [usize; 3] = [name.as_ptr() as usize, 5, name.count_bytes()];
    // SAFETY: the block and the name live across the call.
    let h = unsafe { call(SYS_OPEN, block.as_ptr() as usize) };
    (h != usize::MAX).then_some(h)
}

/// Closes a host handle (SYS_CLOSE); `true` when the host did.
#[cfg(feature = "recorder")]
pub fn close(handle: usize) -> bool {
    let block: [usize; 1] = [handle];
    // SAFETY: the block lives across the call.
    unsafe { call(SYS_CLOSE, block.as_ptr() as usize) == 0 }
}

/// Writes raw bytes to an open host handle (SYS_WRITE); `true` when the
/// host took all of them (the call returns the count it did not write).
#[cfg(any(feature = "defmt", feature = "recorder"))]
pub fn write_bytes(handle: usize, bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return true;
    }
    let block: [usize; 3] = [handle, bytes.as_ptr() as usize, bytes.len()];
    // SAFETY: the block and the bytes live across the call.
    unsafe { call(SYS_WRITE, block.as_ptr() as usize) == 0 }
}

/// Ends the program: QEMU exits with status 0 when `ok`, else non-zero.
pub fn exit(ok: bool) -> ! {
    let reason = if ok {
        ADP_STOPPED_APPLICATION_EXIT
    } else {
        ADP_STOPPED_RUN_TIME_ERROR
    };
    #[cfg(target_arch = "arm")]
    // SAFETY: A32/T32 SYS_EXIT takes the reason code itself.
    unsafe {
        call(SYS_EXIT, reason);
    }
    #[cfg(target_arch = "aarch64")]
    {
        // A64 SYS_EXIT takes a block: reason, then the exit status.
        let block: [u64; 2] = [reason as u64, u64::from(!ok)];
        // SAFETY: the block lives across the call.
        unsafe {
            call(SYS_EXIT, block.as_ptr() as usize);
        }
    }
    // Not under a debugger or QEMU: stop here.
    loop {
        core::hint::spin_loop();
    }
}

/// A line assembled in a fixed buffer, written with one call (so lines
/// from the host's view are never interleaved). It formats strings and
/// integers itself: no `core::fmt` in the image (its machinery is several
/// KiB of flash).
pub struct Line {
    buf: [u8; 192],
    len: usize,
}

impl Line {
    /// An empty line.
    pub const fn new() -> Self {
        Line { buf: [0; 192], len: 0 }
    }

    /// Writes the line and a newline.
    #[inline(never)]
    pub fn flush(&mut self) {
        self.bytes(b"\n");
        self.emit();
    }

    fn emit(&mut self) {
        // Only whole UTF-8 strings and ASCII digits are ever appended.
        if let Ok(s) = core::str::from_utf8(&self.buf[..self.len]) {
            write_str(s);
        }
        self.len = 0;
    }

    fn bytes(&mut self, b: &[u8]) {
        if self.len + b.len() > self.buf.len() {
            self.emit();
        }
        for piece in b.chunks(self.buf.len()) {
            if self.len + piece.len() > self.buf.len() {
                self.emit();
            }
            self.buf[self.len..self.len + piece.len()].copy_from_slice(piece);
            self.len += piece.len();
        }
    }

    /// Appends `s`.
    #[inline(never)]
    pub fn s(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes());
        self
    }

    /// Appends `v` in decimal.
    #[inline(never)]
    pub fn u(&mut self, mut v: u64) -> &mut Self {
        let mut d = [0u8; 20];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.bytes(&d[i..]);
        self
    }

    /// Appends `v` in lower-case hexadecimal, at least `width` digits.
    #[inline(never)]
    pub fn x(&mut self, v: u64, width: usize) -> &mut Self {
        let mut d = [0u8; 16];
        let mut n = 0;
        while n < 16 && (n == 0 || n < width || v >> (4 * n) != 0) {
            d[15 - n] = b"0123456789abcdef"[((v >> (4 * n)) & 0xF) as usize];
            n += 1;
        }
        self.bytes(&d[16 - n..]);
        self
    }
}
