//! The recorder firmware (feature `recorder`): records the embedded H.264
//! and AAC clips as fragmented MP4, then as hybrid MP4, into a RAM sink
//! ([`record::record`]), reads each output back, prints
//!
//! for each of its two recordings (fragmented MP4 `recorder.mp4`, hybrid
//! MP4 `recorder-hybrid.mp4`)
//!
//! ```text
//! FILE recorder video=V audio=A bytes=B fragments=F closed_early=C most_samples=M index_samples=I stack=S
//! FILE readback packets=N bytes=B crc32=XXXXXXXX video=V:XXXXXXXX audio=A:XXXXXXXX
//! ```
//!
//! and writes the output to the host file FILE over semihosting, which
//! `run.sh` compares byte for byte with the host twin's
//! (`examples/record_host.rs`) and reads with `mediaslice packets
//! --summary` (the `readback` line's first three figures). No allocator.

use crate::record::{self, ReadBack, Recorded};
use crate::semihosting::{self, Line};
use crate::stack;
use mediaslice::SliceSink;

/// The inputs, in flash: the recorder's "encoders".
static VIDEO: &[u8] = include_bytes!("../../corpus/files/h264/baseline.h264");
static AUDIO: &[u8] = include_bytes!("../../corpus/files/adts/aac_lc.aac");

/// The RAM sink: room for the whole recording.
const OUT_LEN: usize = 1 << 20;
static mut OUT: [u8; OUT_LEN] = [0; OUT_LEN];

/// The muxer's scratch: records and `moof` room of one fragment, the first
/// packets until the codec configurations are known, and for the hybrid
/// recording its progressive index.
pub const MUX_SCRATCH: usize = record::HYBRID_SCRATCH;
static mut SCRATCH: [u8; MUX_SCRATCH] = [0; MUX_SCRATCH];

/// Records both ways, reads back, prints; `true` when all of it worked.
pub fn run() -> bool {
    let mut l = Line::new();
    l.s("# recorder sizeof");
    for (name, n) in record::state_sizes() {
        l.s(" ").s(name).s("=").u(n as u64);
    }
    l.s(" scratch=")
        .u(record::MUX_SCRATCH as u64)
        .s(" hybrid_scratch=")
        .u(record::HYBRID_SCRATCH as u64)
        .s(" samples_per_fragment=")
        .u(record::SAMPLES_PER_FRAGMENT.into())
        .flush();
    // SAFETY: the only references to OUT and SCRATCH, taken once on the
    // only core.
    let out: &mut [u8] = unsafe { &mut *core::ptr::addr_of_mut!(OUT) };
    let scratch: &mut [u8] = unsafe { &mut *core::ptr::addr_of_mut!(SCRATCH) };
    let mut ok = true;
    for mode in record::Mode::ALL {
        ok &= run_one(mode, out, scratch);
    }
    Line::new()
        .s(if ok { "# recorder ok" } else { "# recorder FAILED" })
        .flush();
    ok
}

/// One recording into `out`: record, print, read back, save.
fn run_one(mode: record::Mode, out: &mut [u8], scratch: &mut [u8]) -> bool {
    let scratch = scratch.get_mut(..mode.scratch()).unwrap_or(&mut []);
    let (r, used) = stack::measure(|| {
        record::record(VIDEO, AUDIO, mode, SliceSink::new(&mut out[..]), &mut scratch[..])
            .map(|(s, r)| (s.into_written().len(), r))
    });
    let (len, rec) = match r {
        Ok(x) => x,
        Err(e) => {
            Line::new()
                .s(mode.file())
                .s(" recorder error: ")
                .s(e.description())
                .flush();
            return false;
        }
    };
    print_recorded(mode, &rec, used);
    let written = out.get(..len).unwrap_or(&[]);
    let back = match record::read_back(written, scratch) {
        Ok(b) => b,
        Err(e) => {
            Line::new()
                .s(mode.file())
                .s(" readback error: ")
                .s(e.description())
                .flush();
            return false;
        }
    };
    print_read_back(mode, &back);
    let saved = save(mode.file(), written);
    Line::new()
        .s("# ")
        .s(mode.file())
        .s(if saved {
            " written to the host"
        } else {
            " not written (no semihosting file)"
        })
        .flush();
    back.packets == rec.packets && rec.closed_early == 0 && !rec.index_full
}

fn print_recorded(mode: record::Mode, r: &Recorded, stack: usize) {
    Line::new()
        .s(mode.file())
        .s(" recorder video=")
        .u(r.packets[0])
        .s(" audio=")
        .u(r.packets[1])
        .s(" bytes=")
        .u(r.bytes)
        .s(" fragments=")
        .u(r.fragments.into())
        .s(" closed_early=")
        .u(r.closed_early.into())
        .s(" most_samples=")
        .u(r.most_samples.into())
        .s(" index_samples=")
        .u(r.index_samples)
        .s(" stack=")
        .u(stack as u64)
        .flush();
}

fn print_read_back(mode: record::Mode, b: &ReadBack) {
    Line::new()
        .s(mode.file())
        .s(" readback packets=")
        .u(b.all_packets)
        .s(" bytes=")
        .u(b.all_bytes)
        .s(" crc32=")
        .x(b.all_crc.into(), 8)
        .s(" video=")
        .u(b.packets[0])
        .s(":")
        .x(b.crc[0].into(), 8)
        .s(" audio=")
        .u(b.packets[1])
        .s(":")
        .x(b.crc[1].into(), 8)
        .flush();
}

/// Writes the recording to the host file `name` (in QEMU's working
/// directory).
fn save(name: &str, bytes: &[u8]) -> bool {
    // The name NUL-terminated, as SYS_OPEN takes it.
    let mut z = [0u8; 32];
    let Some(dst) = z.get_mut(..name.len()) else {
        return false;
    };
    dst.copy_from_slice(name.as_bytes());
    let Ok(cname) = core::ffi::CStr::from_bytes_until_nul(&z) else {
        return false;
    };
    let Some(h) = semihosting::create(cname) else {
        return false;
    };
    let ok = bytes.chunks(64 * 1024).all(|c| semihosting::write_bytes(h, c));
    semihosting::close(h) && ok
}
