//! `phases`: peak resident memory and heap per phase, for
//! benches/scripts/memory.sh.

use super::*;

/// The counting allocator, `/proc/self` and the `phases` command.
mod measure {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

    /// `System` with counters: bytes live now, their peak, allocations.
    pub struct Counting;

    static NOW: AtomicUsize = AtomicUsize::new(0);
    static PEAK: AtomicUsize = AtomicUsize::new(0);
    static ALLOCS: AtomicU64 = AtomicU64::new(0);

    fn grew(by: usize) {
        let now = NOW.fetch_add(by, Relaxed).saturating_add(by);
        PEAK.fetch_max(now, Relaxed);
    }

    // SAFETY: every call goes to `System` unchanged; the counters are plain
    // atomics (no allocation, no locks).
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: the caller's contract is passed on.
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                ALLOCS.fetch_add(1, Relaxed);
                grew(layout.size());
            }
            p
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            // SAFETY: as above.
            let p = unsafe { System.alloc_zeroed(layout) };
            if !p.is_null() {
                ALLOCS.fetch_add(1, Relaxed);
                grew(layout.size());
            }
            p
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: as above.
            unsafe { System.dealloc(ptr, layout) };
            NOW.fetch_sub(layout.size(), Relaxed);
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: as above.
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if !p.is_null() {
                ALLOCS.fetch_add(1, Relaxed);
                if new_size >= layout.size() {
                    grew(new_size - layout.size());
                } else {
                    NOW.fetch_sub(layout.size() - new_size, Relaxed);
                }
            }
            p
        }
    }

    /// Heap bytes live now, peak since the last `reset_peak`, allocations.
    pub fn heap() -> (usize, usize, u64) {
        (NOW.load(Relaxed), PEAK.load(Relaxed), ALLOCS.load(Relaxed))
    }

    pub fn reset_peak() {
        PEAK.store(NOW.load(Relaxed), Relaxed);
    }

    /// `VmHWM` and `VmRSS` of this process, in KiB.
    pub fn vm() -> (u64, u64) {
        let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let field = |k: &str| {
            s.lines()
                .find_map(|l| l.strip_prefix(k))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    /// Resets `VmHWM` to the current RSS (`5` to `/proc/self/clear_refs`,
    /// Linux 4.0+); false when the kernel refuses.
    pub fn reset_hwm() -> bool {
        std::fs::write("/proc/self/clear_refs", "5").is_ok()
    }
}

#[global_allocator]
pub(super) static ALLOC: measure::Counting = measure::Counting;

/// The start of a measured phase.
pub(super) struct Phase {
    t: Instant,
    allocs: u64,
    io: mediaslice::IoStats,
    hwm_reset: bool,
}

impl Phase {
    pub(super) fn start(io: mediaslice::IoStats) -> Self {
        let hwm_reset = measure::reset_hwm();
        measure::reset_peak();
        Phase {
            t: Instant::now(),
            allocs: measure::heap().2,
            io,
            hwm_reset,
        }
    }

    pub(super) fn end(self, name: &str, io: mediaslice::IoStats) -> serde_json::Value {
        // The heap first: reading /proc allocates.
        let (now, peak, allocs) = measure::heap();
        let (hwm, rss) = measure::vm();
        serde_json::json!({
            "phase": name,
            "vm_hwm_kib": hwm,
            "vm_rss_kib": rss,
            "hwm_reset": self.hwm_reset,
            "heap_peak": peak,
            "heap_now": now,
            "allocs": allocs - self.allocs,
            "bytes_read": io.bytes_read - self.io.bytes_read,
            "reads": io.reads - self.io.reads,
            "ms": self.t.elapsed().as_secs_f64() * 1e3,
        })
    }
}

/// `phases`: after `open` (measured by the caller), the tracks and every
/// tag; every packet (CRC over the payloads); a seek to the middle of the
/// first track and up to 1000 packets from there. Prints one JSON object.
pub(super) fn cmd_phases<S: Source, W: Write>(
    d: &mut Demuxer<S>,
    w: &mut W,
    mut phases: Vec<serde_json::Value>,
    name: &str,
    kind: SourceKind,
) -> Outcome {
    let p = Phase::start(d.source().stats());
    let tracks = d.tracks().to_vec();
    let (tags, tag_err) = collect_tags(d);
    let _ = (tags, d.info().duration_us);
    phases.push(p.end("tracks", d.source().stats()));

    let p = Phase::start(d.source().stats());
    let mut crc = Crc32::new();
    let (mut n, mut bytes) = (0u64, 0u64);
    let mut stopped = tag_err;
    loop {
        match d.next_packet() {
            Ok(Some(p)) => {
                crc.update(p.data);
                n += 1;
                bytes += p.data.len() as u64;
            }
            Ok(None) => break,
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    phases.push(p.end("packets", d.source().stats()));

    let p = Phase::start(d.source().stats());
    let mut after_seek = 0u32;
    if let Some(t) = tracks.first() {
        let target = t.duration.map_or(0, |x| i64::try_from(x / 2).unwrap_or(0));
        if d.seek(0, target).is_ok() {
            while after_seek < 1000 {
                match d.next_packet() {
                    Ok(Some(p)) => {
                        std::hint::black_box(crc32(p.data));
                        after_seek += 1;
                    }
                    _ => break,
                }
            }
        }
    }
    phases.push(p.end("seek", d.source().stats()));
    let doc = serde_json::json!({
        "file": name,
        "source": format!("{kind:?}").to_ascii_lowercase(),
        "size": d.source().len(),
        "packets": n,
        "bytes": bytes,
        "crc32": format!("{:08x}", crc.finalize()),
        "packets_after_seek": after_seek,
        "phases": phases,
    });
    serde_json::to_writer(&mut *w, &doc)?;
    w.write_all(b"\n")?;
    Ok(stopped)
}
