//! The recorder: what a camera or set-top box does with its encoders'
//! output. Two elementary streams (H.264 in Annex B, AAC in ADTS) are
//! read from memory, looped [`LOOPS`] times with their times shifted so
//! that the recording runs on, interleaved by decode time, and written as
//! fragmented MP4 (ISO/IEC 14496-12 §8.8, CMAF brand) to a [`Sink`] with
//! no allocator; then the output is read back with the demuxer and each
//! track's packets are counted and hashed.
//!
//! The same file serves the firmware (`main.rs`, feature `recorder`) and
//! its host twin (`examples/record_host.rs`), so `run.sh` can compare the
//! two outputs byte for byte: one implementation, two architectures.
//!
//! Memory: the demuxers' state, the muxer's state
//! ([`mediaslice::mux::Muxer`], fixed size) and the caller's muxer scratch
//! (per sample of the open fragment a 24-byte record and 40 bytes of
//! `moof` room, [`SAMPLES_PER_FRAGMENT`] at most; and the first fragment's
//! payload until the codec configurations are known from the packets, as
//! `core/src/format/mp4/fmp4.rs` documents). The payload of later
//! fragments goes from the input borrow to the sink with no copy.

use mediaslice::crc::Crc32;
use mediaslice::mux::Muxer;
use mediaslice::{
    Demuxer, Error, ErrorKind, Fragmenting, MuxFormat, Packet, Rational, Result, Sink, SliceSource, TrackSpec,
};

/// Times each input is played: about 20 s of recording from the 1 s
/// corpus clips.
pub const LOOPS: u32 = 20;
/// Least fragment duration (ms).
pub const FRAGMENT_MS: u32 = 2000;
/// Most samples of all tracks in one fragment (the record table's size).
pub const SAMPLES_PER_FRAGMENT: u32 = 256;

/// The muxer's scratch for a fragmented recording:
/// [`SAMPLES_PER_FRAGMENT`] records of 24 bytes and 40 bytes of `moof`
/// room each (16 KiB), the init segment being built (about 2.3 KiB), and
/// room for the packets held until every track's codec configuration is
/// known from its first packet (Annex B parameter sets, the ADTS header).
pub const MUX_SCRATCH: usize = 20 * 1024;

/// The muxer's scratch for a hybrid recording: as much again for the
/// progressive index it keeps until `finish` (about 4 bytes a sample: the
/// 1,400 samples here take under 6 KiB). While a codec configuration is
/// to come from the packets, the hybrid muxer gives its fragments half
/// the scratch and the index the other half.
pub const HYBRID_SCRATCH: usize = 2 * 16 * 1024;

/// The two recordings the firmware makes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Fragmented MP4 / CMAF: every fragment complete on its own.
    Fragmented,
    /// Hybrid MP4: fragments while recording, a progressive `moov` over
    /// the same payload at `finish` (issue 25).
    Hybrid,
}

impl Mode {
    /// Both, in the order the firmware records them.
    pub const ALL: [Mode; 2] = [Mode::Fragmented, Mode::Hybrid];

    /// The host file name of the recording.
    pub fn file(self) -> &'static str {
        match self {
            Mode::Fragmented => "recorder.mp4",
            Mode::Hybrid => "recorder-hybrid.mp4",
        }
    }

    /// The muxer format.
    pub fn format(self) -> MuxFormat {
        let f = Fragmenting {
            duration_ms: FRAGMENT_MS,
            cmaf: true,
            max_samples: SAMPLES_PER_FRAGMENT,
            styp: false,
            sidx: false,
        };
        match self {
            Mode::Fragmented => MuxFormat::Fmp4(f),
            Mode::Hybrid => MuxFormat::HybridMp4(f),
        }
    }

    /// The muxer scratch it needs.
    pub fn scratch(self) -> usize {
        match self {
            Mode::Fragmented => MUX_SCRATCH,
            Mode::Hybrid => HYBRID_SCRATCH,
        }
    }
}

/// The writer's state, whose sizes the firmware and its twin print:
/// the muxer (with its context: tracks, codec configurations, tags) and
/// the parts of it.
pub fn state_sizes() -> [(&'static str, usize); 3] {
    use core::mem::size_of;
    [
        ("Muxer", size_of::<Muxer<mediaslice::SliceSink<'static>, &mut [u8]>>()),
        ("AnyMuxer", size_of::<mediaslice::AnyMuxer>()),
        ("MuxContext", size_of::<mediaslice::MuxContext>()),
    ]
}

/// What the recorder wrote.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// Packets written per track (video, audio).
    pub packets: [u64; 2],
    /// Output bytes.
    pub bytes: u64,
    /// Fragments, and those closed early because the record table was full.
    pub fragments: u32,
    pub closed_early: u32,
    /// Most samples in one fragment.
    pub most_samples: u32,
    /// Hybrid: samples in the progressive index, and whether it filled
    /// its part of the scratch (the file then stays fragmented).
    pub index_samples: u64,
    pub index_full: bool,
}

/// Per-track summary of a read-back, and of all tracks together (the
/// figure `mediaslice packets --summary` prints).
#[derive(Default, Clone, Copy, PartialEq, Eq)]
pub struct ReadBack {
    pub packets: [u64; 2],
    pub crc: [u32; 2],
    pub all_packets: u64,
    pub all_bytes: u64,
    pub all_crc: u32,
}

/// One looped input: its bytes, its demuxer, the time one loop
/// lasts (in the track's time base) and its time base.
struct Input<'a> {
    data: &'a [u8],
    demuxer: Demuxer<SliceSource<'a>>,
    span: i64,
    time_base: Rational,
}

impl<'a> Input<'a> {
    /// Opens `data` (detected: raw H.264 or ADTS) and measures one loop:
    /// the last decode time plus one packet's duration.
    fn open(data: &'a [u8]) -> Result<Self> {
        let (first, span) = {
            let mut probe = Demuxer::open(SliceSource::new(data), None)?;
            let (mut first, mut last, mut step, mut clock) = (None, 0i64, 0i64, Clock::default());
            while let Some(p) = probe.next_packet()? {
                let t = clock.time_of(&p)?;
                step = p.duration.and_then(|d| i64::try_from(d).ok()).unwrap_or(t - last);
                first.get_or_insert(t);
                last = t;
            }
            (first.unwrap_or(0), last.saturating_add(step))
        };
        let demuxer = Demuxer::open(SliceSource::new(data), None)?;
        let time_base = demuxer
            .tracks()
            .first()
            .map(|t| t.time_base)
            .unwrap_or(Rational::new(1, 1));
        Ok(Input {
            data,
            demuxer,
            span: span.saturating_sub(first).max(1),
            time_base,
        })
    }

    /// Opens the input again from its start, for the next loop.
    fn restart(&mut self) -> Result<()> {
        self.demuxer = Demuxer::open(SliceSource::new(self.data), None)?;
        Ok(())
    }
}

/// The decode time of `p` in the recording (its own or the clock's, in
/// loop `loops` of `span`), in seconds, as a fraction comparable with
/// another track's: `(value * num, den)`.
fn seconds(tb: Rational, clock: Clock, loops: u32, span: i64, p: &Packet<'_>) -> (i128, i128) {
    let t = p.dts.or(p.pts).unwrap_or(clock.elapsed);
    let t = i128::from(t) + i128::from(span) * i128::from(loops);
    (t * i128::from(tb.num), i128::from(tb.den))
}

/// The times of one input's packets in one loop: their own, or for an
/// input without times (raw H.264 has none) the sum of the durations
/// before them, as a recorder stamps its encoder's frames.
#[derive(Default, Clone, Copy)]
struct Clock {
    elapsed: i64,
}

impl Clock {
    /// The decode time of `p`, and the clock moved past it.
    fn time_of(&mut self, p: &Packet<'_>) -> Result<i64> {
        let own = p.dts.or(p.pts);
        let t = own.unwrap_or(self.elapsed);
        let d = p.duration.and_then(|d| i64::try_from(d).ok());
        if own.is_none() && d.is_none() {
            return Err(Error::new(
                ErrorKind::Malformed,
                0,
                &"recorder: a packet with neither time nor duration",
            ));
        }
        self.elapsed = t.saturating_add(d.unwrap_or(0));
        Ok(t)
    }
}

/// `p` as track `track` of the recording: stamped by `clock` when it has
/// no time, and shifted by `loops` spans.
fn stamped<'p>(p: Packet<'p>, track: usize, clock: &mut Clock, loops: u32, span: i64) -> Result<Packet<'p>> {
    let off = span.saturating_mul(i64::from(loops));
    let own = p.dts.is_some() || p.pts.is_some();
    let t = clock.time_of(&p)?;
    let (pts, dts) = if own { (p.pts, p.dts) } else { (Some(t), Some(t)) };
    Ok(Packet {
        track,
        pts: pts.map(|t| t.saturating_add(off)),
        dts: dts.map(|t| t.saturating_add(off)),
        ..p
    })
}

/// Records `video` (H.264 Annex B) and `audio` (ADTS) looped [`LOOPS`]
/// times into `sink` as fragmented MP4, with `scratch` for the muxer. The
/// inputs need no scratch: their packets are contiguous in memory.
pub fn record<K: Sink>(video: &[u8], audio: &[u8], mode: Mode, sink: K, scratch: &mut [u8]) -> Result<(K, Recorded)> {
    let mut v = Input::open(video)?;
    let mut a = Input::open(audio)?;
    let mut m = Muxer::with_scratch(sink, mode.format(), scratch)?;
    for input in [&mut v, &mut a] {
        let no_track = Error::new(ErrorKind::Malformed, 0, &"recorder: an input without a track");
        let track = input.demuxer.tracks().first().cloned().ok_or(no_track)?;
        let config = input.demuxer.codec_config(0)?;
        m.add_track(&TrackSpec::new(&track).with_config(config))?;
    }
    // Copies: the packets below borrow the inputs.
    let (v_tb, v_span, a_tb, a_span) = (v.time_base, v.span, a.time_base, a.span);
    let (mut v_loop, mut a_loop) = (0u32, 0u32);
    let (mut v_clock, mut a_clock) = (Clock::default(), Clock::default());
    let mut rec = Recorded::default();
    // The next packet of each input; the one due first is written, then
    // its input moves on (into its next loop at the end of one).
    let mut nv = v.demuxer.next_packet()?;
    let mut na = a.demuxer.next_packet()?;
    loop {
        if nv.is_none() && v_loop + 1 < LOOPS {
            v_loop += 1;
            v_clock = Clock::default();
            v.restart()?;
            nv = v.demuxer.next_packet()?;
        }
        if na.is_none() && a_loop + 1 < LOOPS {
            a_loop += 1;
            a_clock = Clock::default();
            a.restart()?;
            na = a.demuxer.next_packet()?;
        }
        let video_first = match (&nv, &na) {
            (Some(x), Some(y)) => {
                let ((xn, xd), (yn, yd)) = (
                    seconds(v_tb, v_clock, v_loop, v_span, x),
                    seconds(a_tb, a_clock, a_loop, a_span, y),
                );
                xn * yd <= yn * xd
            }
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if video_first {
            if let Some(p) = nv.take() {
                m.write_packet(&stamped(p, 0, &mut v_clock, v_loop, v_span)?)?;
                rec.packets[0] += 1;
            }
            nv = v.demuxer.next_packet()?;
        } else {
            if let Some(p) = na.take() {
                m.write_packet(&stamped(p, 1, &mut a_clock, a_loop, a_span)?)?;
                rec.packets[1] += 1;
            }
            na = a.demuxer.next_packet()?;
        }
    }
    if let Some(st) = m.fragment_stats() {
        rec.fragments = st.fragments;
        rec.closed_early = st.closed_early;
        rec.most_samples = st.most_samples;
        // Before `finish`: the last fragment's samples are not counted yet.
        rec.index_samples = st.index_samples;
        rec.index_full = st.index_full;
    }
    let sink = m.finish()?;
    rec.bytes = sink.position();
    Ok((sink, rec))
}

/// Reads `out` back: packets per track and over all, with CRC-32s.
pub fn read_back(out: &[u8], scratch: &mut [u8]) -> Result<ReadBack> {
    let mut d = Demuxer::open(SliceSource::with_scratch(out, scratch), None)?;
    let mut r = ReadBack::default();
    let mut crcs = [Crc32::new(), Crc32::new()];
    let mut all = Crc32::new();
    while let Some(p) = d.next_packet()? {
        if let (Some(n), Some(c)) = (r.packets.get_mut(p.track), crcs.get_mut(p.track)) {
            *n += 1;
            c.update(p.data);
        }
        all.update(p.data);
        r.all_packets += 1;
        r.all_bytes += p.data.len() as u64;
    }
    let [c0, c1] = crcs;
    r.crc = [c0.finish(), c1.finish()];
    r.all_crc = all.finish();
    Ok(r)
}
