//! A `defmt` global logger over semihosting: each log frame is encoded into
//! a small buffer and written with one SYS_WRITE to the host's stdout
//! (QEMU passes the bytes through; decode them with
//! `defmt-print -e <the ELF>`). Single core and no interrupts log, so a flag
//! is enough to catch re-entry.

use crate::semihosting;
use core::ptr::addr_of_mut;
use core::sync::atomic::{AtomicBool, Ordering};

#[defmt::global_logger]
struct Logger;

static TAKEN: AtomicBool = AtomicBool::new(false);
static mut ENCODER: defmt::Encoder = defmt::Encoder::new();
static mut FRAME: Frame = Frame {
    handle: None,
    opened: false,
    buf: [0; 256],
    len: 0,
};

struct Frame {
    handle: Option<usize>,
    opened: bool,
    buf: [u8; 256],
    len: usize,
}

impl Frame {
    fn push(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
    }

    fn flush(&mut self) {
        if !self.opened {
            self.handle = semihosting::open_stdout();
            self.opened = true;
        }
        if let Some(h) = self.handle {
            semihosting::write_bytes(h, &self.buf[..self.len]);
        }
        self.len = 0;
    }
}

fn frame() -> &'static mut Frame {
    // SAFETY: only reached between acquire and release, which TAKEN makes
    // exclusive on this single-core program.
    unsafe { &mut *addr_of_mut!(FRAME) }
}

fn encoder() -> &'static mut defmt::Encoder {
    // SAFETY: as for `frame`.
    unsafe { &mut *addr_of_mut!(ENCODER) }
}

unsafe impl defmt::Logger for Logger {
    fn acquire() {
        if TAKEN.swap(true, Ordering::Acquire) {
            // Re-entered (a log inside a log): stop rather than corrupt
            // the frame being written.
            crate::semihosting::write_str("defmt: logger re-entered\n");
            crate::semihosting::exit(false);
        }
        encoder().start_frame(|b| frame().push(b));
    }

    unsafe fn flush() {
        frame().flush();
    }

    unsafe fn release() {
        encoder().end_frame(|b| frame().push(b));
        frame().flush();
        TAKEN.store(false, Ordering::Release);
    }

    unsafe fn write(bytes: &[u8]) {
        encoder().write(bytes, |b| frame().push(b));
    }
}
