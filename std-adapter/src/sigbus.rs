//! A process-wide `SIGBUS` guard for [`crate::MmapSource`] (Linux and
//! Android).
//!
//! A file that shrinks while it is mapped makes every later access to the
//! lost pages raise `SIGBUS`, which kills the process. The guard turns such
//! a fault into a value the source can report:
//!
//! * A map is registered in a fixed table of [`SLOTS`] slots of atomics (no
//!   lock, no allocation), so the handler can read it.
//! * On `SIGBUS`, the handler looks for the faulting address in the table.
//!   Inside a registered map, it maps one anonymous zero page over the
//!   faulting page (`mmap(MAP_FIXED | MAP_ANONYMOUS | MAP_PRIVATE)`), counts
//!   the fault in the slot and returns: the access is executed again and
//!   reads zeros. The source checks the count at its next call and reports
//!   the truncation.
//! * Outside every registered map, the fault is passed to the handler that
//!   was installed before (Rust's own stack-overflow handler, a runtime's,
//!   an application's); with none, the default action is restored and the
//!   signal raised again, so the process dies as it would have.
//!
//! On other targets nothing is installed and a registration is refused
//! (`Guard::register` gives `None`): a truncated mapped file kills the
//! process there, as it always did.

/// Slots in the registry: how many maps can be guarded at once. A map
/// opened while all are taken is served unguarded.
pub(crate) const SLOTS: usize = 128;

#[cfg(any(target_os = "linux", target_os = "android"))]
mod imp {
    use super::SLOTS;
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
    use std::sync::OnceLock;

    /// One registered map. `seq` is a sequence lock: odd while the owner
    /// rewrites `start`/`len`, even when they are stable; the handler reads
    /// `seq`, the range, `seq` again, and uses the range only when both
    /// reads give the same even value. `owner` makes one registration the
    /// only writer of a slot.
    struct Slot {
        owner: AtomicBool,
        seq: AtomicU64,
        start: AtomicUsize,
        len: AtomicUsize,
        /// Faults absorbed in this map since it was registered.
        faults: AtomicU64,
        /// Lowest faulting offset into the map (`usize::MAX`: none).
        first: AtomicUsize,
    }

    #[allow(clippy::declare_interior_mutable_const)] // the array initialiser
    const FREE: Slot = Slot {
        owner: AtomicBool::new(false),
        seq: AtomicU64::new(0),
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
        faults: AtomicU64::new(0),
        first: AtomicUsize::new(usize::MAX),
    };

    static TABLE: [Slot; SLOTS] = [FREE; SLOTS];
    /// Faults absorbed in every map, ever (for a caller that cannot reach
    /// its source, as the CLI while it holds a packet).
    static TOTAL: AtomicU64 = AtomicU64::new(0);
    /// The page size, read once before the handler is installed (`sysconf`
    /// is not async-signal-safe).
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    /// The `SIGBUS` action in force before ours, written once before ours
    /// is installed, read by the handler (`OnceLock::get` is one atomic
    /// load: no lock).
    static PREVIOUS: OnceLock<Previous> = OnceLock::new();
    /// Whether the handler is in place.
    static INSTALLED: OnceLock<bool> = OnceLock::new();

    struct Previous(libc::sigaction);
    // SAFETY: a `sigaction` is plain data (a handler address, flags, a
    // mask); it is written once before any reader exists and never changed.
    unsafe impl Sync for Previous {}
    // SAFETY: as above.
    unsafe impl Send for Previous {}

    /// Installs the handler once per process; false when it could not be.
    fn install() -> bool {
        *INSTALLED.get_or_init(|| {
            // SAFETY: `sysconf` has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            let Ok(page) = usize::try_from(page) else { return false };
            if !page.is_power_of_two() {
                return false;
            }
            PAGE.store(page, SeqCst);
            // SAFETY: `sigaction` is plain data; all-zero is a valid value
            // (an empty mask, no flags, `SIG_DFL`).
            let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: a null new action only reads the current one into
            // `old`, a valid out-pointer.
            if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) } != 0 {
                return false;
            }
            let _ = PREVIOUS.set(Previous(old));
            // SAFETY: as above, all-zero is a valid `sigaction`.
            let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
            new.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            // SA_ONSTACK: a stack overflow reported as SIGBUS still finds
            // the alternate stack Rust sets up for it, and is chained on.
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            // SAFETY: `new.sa_mask` is a valid set to clear; the handler has
            // the signature `SA_SIGINFO` calls for and only does
            // async-signal-safe work (see `on_sigbus`); `PREVIOUS` and
            // `PAGE` are set before it can run.
            unsafe {
                libc::sigemptyset(&mut new.sa_mask);
                libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) == 0
            }
        })
    }

    /// The handler. Only atomics, `mmap`, `sigaction` and `raise` (system
    /// calls that take no lock) are used, and `errno` is kept.
    extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid `siginfo_t` for a handler
        // installed with `SA_SIGINFO`; it is null-checked anyway.
        let (addr, code) = if info.is_null() {
            (0, 0)
        } else {
            // SAFETY: as above; `si_addr` is the faulting address for SIGBUS.
            unsafe { ((*info).si_addr() as usize, (*info).si_code) }
        };
        let errno_at = errno_location();
        // SAFETY: `errno_at` is this thread's `errno`, valid for its life.
        let errno = unsafe { *errno_at };
        // A fault raised by the kernel (si_code > 0), not one sent by kill.
        let absorbed = code > 0 && absorb(addr);
        // SAFETY: as above.
        unsafe { *errno_at = errno };
        if !absorbed {
            chain(sig, info, ctx, code);
        }
    }

    /// This thread's `errno`.
    fn errno_location() -> *mut libc::c_int {
        // SAFETY: both functions only return the calling thread's `errno`
        // address (no lock, async-signal-safe).
        #[cfg(target_os = "android")]
        return unsafe { libc::__errno() };
        #[cfg(not(target_os = "android"))]
        return unsafe { libc::__errno_location() };
    }

    /// Maps a zero page over the faulting page when `addr` lies in a
    /// registered map; whether it did.
    fn absorb(addr: usize) -> bool {
        let page = PAGE.load(SeqCst);
        if page == 0 {
            return false;
        }
        for slot in &TABLE {
            let before = slot.seq.load(SeqCst);
            if before % 2 == 1 {
                continue;
            }
            let (start, len) = (slot.start.load(SeqCst), slot.len.load(SeqCst));
            if slot.seq.load(SeqCst) != before || len == 0 {
                continue;
            }
            let Some(off) = addr.checked_sub(start).filter(|&o| o < len) else {
                continue;
            };
            let at = addr & !(page - 1);
            // SAFETY: `at..at + page` lies inside a map that is registered,
            // hence alive (a registration ends before its map is unmapped,
            // and no access to a map can run after it is dropped). Replacing
            // one of its read-only file pages, which can no longer be read
            // (the file ends before it), with a read-only zero page changes
            // no other memory; the map's own `munmap` later removes it with
            // the rest. `mmap` is a system call wrapper that takes no lock.
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return false;
            }
            slot.first.fetch_min(off, SeqCst);
            slot.faults.fetch_add(1, SeqCst);
            TOTAL.fetch_add(1, SeqCst);
            return true;
        }
        false
    }

    /// Passes a fault that is not ours on to the previous action.
    fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void, code: libc::c_int) {
        let prev = PREVIOUS.get().map(|p| (p.0.sa_sigaction, p.0.sa_flags));
        match prev {
            Some((h, _)) if h == libc::SIG_IGN && code <= 0 => {
                // A SIGBUS sent by kill(2) to a process that ignored it.
            }
            Some((h, flags)) if h != libc::SIG_DFL && h != libc::SIG_IGN => {
                if flags & libc::SA_SIGINFO != 0 {
                    // SAFETY: the previous action was installed with
                    // SA_SIGINFO, so `h` is a handler of this signature; it
                    // is called as the kernel would have called it.
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        unsafe { std::mem::transmute(h) };
                    f(sig, info, ctx);
                } else {
                    // SAFETY: without SA_SIGINFO, `h` is a one-argument
                    // handler.
                    let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(h) };
                    f(sig);
                }
            }
            _ => {
                // SAFETY: all-zero is `SIG_DFL` with no flags; `sigaction`
                // and `raise` are async-signal-safe. The signal is blocked
                // while this handler runs, so the raised one is delivered
                // (with the default action: the process ends) on return; a
                // fault would also repeat on return.
                unsafe {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    libc::sigemptyset(&mut dfl.sa_mask);
                    libc::sigaction(sig, &dfl, std::ptr::null_mut());
                    libc::raise(sig);
                }
            }
        }
    }

    /// A registered map; the registration ends when this is dropped, which
    /// must happen before the map is unmapped.
    #[derive(Debug)]
    pub(crate) struct Guard {
        slot: usize,
    }

    impl Guard {
        /// Registers `len` bytes from `start` (rounded up to whole pages);
        /// `None` when the handler cannot be installed or every slot is
        /// taken.
        pub(crate) fn register(start: *const u8, len: usize) -> Option<Guard> {
            if !install() || len == 0 {
                return None;
            }
            let page = PAGE.load(SeqCst);
            let len = len.checked_next_multiple_of(page)?;
            let slot = TABLE
                .iter()
                .position(|s| s.owner.compare_exchange(false, true, SeqCst, SeqCst).is_ok())?;
            let s = TABLE.get(slot)?;
            s.seq.fetch_add(1, SeqCst);
            s.faults.store(0, SeqCst);
            s.first.store(usize::MAX, SeqCst);
            s.start.store(start as usize, SeqCst);
            s.len.store(len, SeqCst);
            s.seq.fetch_add(1, SeqCst);
            Some(Guard { slot })
        }

        /// Faults absorbed in this map.
        pub(crate) fn faults(&self) -> u64 {
            TABLE.get(self.slot).map_or(0, |s| s.faults.load(SeqCst))
        }

        /// The lowest offset into the map that faulted, if any did.
        pub(crate) fn first_fault(&self) -> Option<u64> {
            let f = TABLE.get(self.slot).map_or(usize::MAX, |s| s.first.load(SeqCst));
            (f != usize::MAX).then_some(f as u64)
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            if let Some(s) = TABLE.get(self.slot) {
                s.seq.fetch_add(1, SeqCst);
                s.len.store(0, SeqCst);
                s.start.store(0, SeqCst);
                s.seq.fetch_add(1, SeqCst);
                s.owner.store(false, SeqCst);
            }
        }
    }

    /// Faults absorbed in every guarded map of this process.
    pub(crate) fn total() -> u64 {
        TOTAL.load(SeqCst)
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod imp {
    /// Never registered on this target.
    #[derive(Debug)]
    pub(crate) struct Guard(());

    impl Guard {
        pub(crate) fn register(_start: *const u8, _len: usize) -> Option<Guard> {
            None
        }
        pub(crate) fn faults(&self) -> u64 {
            0
        }
        pub(crate) fn first_fault(&self) -> Option<u64> {
            None
        }
    }

    pub(crate) fn total() -> u64 {
        0
    }
}

pub(crate) use imp::{total, Guard};
