//! The recorder firmware (feature `recorder`): records the embedded H.264
//! and AAC clips as fragmented MP4 into a RAM sink ([`record::record`]),
//! reads its output back, prints
//!
//! ```text
//! recorder video=V audio=A bytes=B fragments=F closed_early=C most_samples=M stack=S
//! readback packets=N bytes=B crc32=XXXXXXXX video=V:XXXXXXXX audio=A:XXXXXXXX
//! ```
//!
//! and writes the output to the host file `recorder.mp4` over semihosting,
//! which `run.sh` compares byte for byte with the host twin's
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

/// The muxer's scratch (records and `moof` room of one fragment, and the
/// first fragment's payload until the codec configurations are known).
pub const MUX_SCRATCH: usize = record::MUX_SCRATCH;
static mut SCRATCH: [u8; MUX_SCRATCH] = [0; MUX_SCRATCH];

/// Records, reads back, prints; `true` when all of it worked.
pub fn run() -> bool {
    let mut l = Line::new();
    l.s("# recorder sizeof");
    for (name, n) in record::state_sizes() {
        l.s(" ").s(name).s("=").u(n as u64);
    }
    l.s(" scratch=")
        .u(MUX_SCRATCH as u64)
        .s(" samples_per_fragment=")
        .u(record::SAMPLES_PER_FRAGMENT.into())
        .flush();
    // SAFETY: the only references to OUT and SCRATCH, taken once on the
    // only core.
    let out: &mut [u8] = unsafe { &mut *core::ptr::addr_of_mut!(OUT) };
    let scratch: &mut [u8] = unsafe { &mut *core::ptr::addr_of_mut!(SCRATCH) };
    let (r, used) = stack::measure(|| {
        record::record(VIDEO, AUDIO, SliceSink::new(out), &mut scratch[..]).map(|(s, r)| (s.into_written(), r))
    });
    let (written, rec) = match r {
        Ok(x) => x,
        Err(e) => {
            Line::new().s("recorder error: ").s(e.description()).flush();
            return false;
        }
    };
    print_recorded(&rec, used);
    let back = match record::read_back(written, scratch) {
        Ok(b) => b,
        Err(e) => {
            Line::new().s("readback error: ").s(e.description()).flush();
            return false;
        }
    };
    print_read_back(&back);
    let saved = save(written);
    Line::new()
        .s("# recorder.mp4 ")
        .s(if saved {
            "written to the host"
        } else {
            "not written (no semihosting file)"
        })
        .flush();
    let ok = back.packets == rec.packets && rec.closed_early == 0;
    Line::new()
        .s(if ok { "# recorder ok" } else { "# recorder FAILED" })
        .flush();
    ok
}

fn print_recorded(r: &Recorded, stack: usize) {
    Line::new()
        .s("recorder video=")
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
        .s(" stack=")
        .u(stack as u64)
        .flush();
}

fn print_read_back(b: &ReadBack) {
    Line::new()
        .s("readback packets=")
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

/// Writes the recording to the host file `recorder.mp4`.
fn save(bytes: &[u8]) -> bool {
    let Some(h) = semihosting::create(c"recorder.mp4") else {
        return false;
    };
    let ok = bytes.chunks(64 * 1024).all(|c| semihosting::write_bytes(h, c));
    semihosting::close(h) && ok
}
