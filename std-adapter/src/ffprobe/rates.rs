//! Stream facts ffprobe takes from the first packets it reads
//! (`avformat_find_stream_info`): `start_pts`, `r_frame_rate` and
//! `avg_frame_rate`.
//!
//! ffmpeg computes them as follows (libavformat, 5.1), and so do we, from
//! the timestamps of each stream's first [`PROBE_PACKETS`] packets:
//!
//! - `start_pts` is the stream's first presentation timestamp: the least
//!   `pts` among the first packets (B-frames reorder them).
//! - `r_frame_rate`, the "real base frame rate", is the least rate at which
//!   every frame falls on a tick: MP4 states it when its sample durations
//!   are all equal (`timescale / delta`); else, with a time base finer than
//!   1/100 s, the gcd of the `dts` steps when it is coarse enough, or the
//!   standard frame rate (`n/12`, integer and NTSC rates) the steps fit best;
//!   else the codec's frame rate, or the time base's reciprocal.
//! - `avg_frame_rate`: MP4 states `frames * timescale / duration` from its
//!   sample table; other containers the mean frame rate over the probed
//!   packets, rounded to a standard rate when within 1%; IVF none (ffmpeg
//!   sums packet durations, and its IVF packets have none).
//! - Audio, subtitle and data streams have `0/0` for both; an attached
//!   picture `90000/1` and `0/0` (its time base's reciprocal and no rate).

use mediaslice::{Codec, FormatKind, Packet, Track, TrackKind};

/// Packets per stream kept for the derivations: ffmpeg's
/// `fps_analyze_framecount` is 20 frame steps, doubled when the time base
/// is coarser than 0.5 ms (Matroska's milliseconds).
pub const PROBE_PACKETS: usize = 41;

/// The packets of a stream ffmpeg's frame rate analysis looks at.
fn analysed(stamps: &[Stamp], t: &Track) -> usize {
    let coarse = u64::from(t.time_base.num) * 2000 > u64::from(t.time_base.den);
    stamps.len().min(if coarse { 41 } else { 21 })
}

/// The timing facts of one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamTiming {
    /// First presentation timestamp, in the stream's time base.
    pub start_pts: Option<i64>,
    /// `r_frame_rate` as `(num, den)`; `(0, 0)` when none.
    pub r_frame_rate: (u64, u64),
    /// `avg_frame_rate` as `(num, den)`; `(0, 0)` when none.
    pub avg_frame_rate: (u64, u64),
    /// The first packet's presentation timestamp, discarded or not.
    pub first_pts: Option<i64>,
}

#[derive(Debug, Clone, Copy)]
struct Stamp {
    pts: Option<i64>,
    dts: Option<i64>,
    duration: Option<u64>,
    discard: bool,
}

/// The first packets' timestamps of each stream.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    streams: Vec<Vec<Stamp>>,
    first: Vec<Vec<u8>>,
    ends: Vec<[Option<i64>; 2]>,
    first_pos: Vec<Option<u64>>,
    sizes: Vec<Vec<u32>>,
    /// The first four bytes of each packet, beside `sizes` (a frame
    /// header's bit rate).
    heads: Vec<Vec<[u8; 4]>>,
    /// Per stream: where its last packet began, where it ended when it
    /// was contiguous, and the latest `pts` of a packet that began a
    /// container packet (see [`Timing::raw_end`]).
    raw: Vec<RawEnd>,
    /// Per stream: whether its last packet seen was cut by the end of the
    /// input.
    cut: Vec<bool>,
}

#[derive(Debug, Clone, Copy, Default)]
struct RawEnd {
    pos: Option<u64>,
    end: Option<u64>,
    pts: Option<i64>,
}

/// Most packet sizes kept per stream (for ffmpeg's running bit rate).
const MAX_SIZES: usize = 1 << 16;

/// Most bytes of a stream's first packet kept for its header facts.
const FIRST_PACKET_BYTES: usize = 1 << 16;

impl Timing {
    /// A collector for `n` streams.
    pub fn new(n: usize) -> Self {
        Timing {
            streams: vec![Vec::new(); n],
            first: vec![Vec::new(); n],
            ends: vec![[None; 2]; n],
            first_pos: vec![None; n],
            sizes: vec![Vec::new(); n],
            heads: vec![Vec::new(); n],
            raw: vec![RawEnd::default(); n],
            cut: vec![false; n],
        }
    }

    /// Notes `p` if its stream has fewer than [`PROBE_PACKETS`] yet.
    pub fn observe(&mut self, p: &Packet<'_>) {
        self.observe_end(p);
        if let Some(s) = self.streams.get_mut(p.track) {
            if s.is_empty() {
                if let Some(f) = self.first_pos.get_mut(p.track) {
                    *f = p.pos;
                }
                if let Some(f) = self.first.get_mut(p.track) {
                    f.extend_from_slice(p.data.get(..FIRST_PACKET_BYTES).unwrap_or(p.data));
                }
            }
            if s.len() < PROBE_PACKETS {
                s.push(Stamp {
                    pts: p.pts,
                    dts: p.dts,
                    duration: p.duration,
                    discard: p.flags.discard,
                });
            }
        }
    }

    /// Notes where `p` ends for [`Timing::end`] and its size for
    /// [`Timing::sizes`].
    pub fn observe_end(&mut self, p: &Packet<'_>) {
        if let Some(s) = self.sizes.get_mut(p.track).filter(|s| s.len() < MAX_SIZES) {
            s.push(u32::try_from(p.data.len()).unwrap_or(u32::MAX));
            if let Some(h) = self.heads.get_mut(p.track) {
                let mut head = [0u8; 4];
                for (d, b) in head.iter_mut().zip(p.data) {
                    *d = *b;
                }
                h.push(head);
            }
        }
        if let (Some(e), Some(pts)) = (self.ends.get_mut(p.track), p.pts) {
            let d = p.duration.and_then(|d| i64::try_from(d).ok()).unwrap_or(0);
            for (slot, end) in e.iter_mut().zip([pts, pts.saturating_add(d)]) {
                *slot = Some(slot.map_or(end, |x| x.max(end)));
            }
        }
        if let Some(c) = self.cut.get_mut(p.track) {
            *c = p.flags.truncated;
        }
        if let Some(r) = self.raw.get_mut(p.track) {
            let begins = p.pos.is_none() || (p.pos != r.pos && !(p.contiguous && p.pos == r.end));
            if let (true, Some(pts)) = (begins, p.pts) {
                r.pts = Some(r.pts.map_or(pts, |x| x.max(pts)));
            }
            r.pos = p.pos;
            r.end = p.pos.filter(|_| p.contiguous).map(|at| at + p.data.len() as u64);
        }
    }

    /// The latest `pts` of stream `i`'s container packets (a PES packet of
    /// a transport or program stream), as ffmpeg's demuxer gives them before
    /// its parser splits them into frames. A frame continues the container
    /// packet of the frame before when it has the same position (a TS
    /// frame states its PES packet's) or, both being contiguous, begins
    /// where that one ends (a PS frame states its own); else it begins one
    /// and carries its time (the frames after it in the same PES have
    /// timestamps only the parser derives).
    pub fn raw_end(&self, i: usize) -> Option<i64> {
        self.raw.get(i).and_then(|r| r.pts)
    }

    /// The latest `pts` (`pts + duration` when `with_duration`) of stream
    /// `i`'s packets seen.
    pub fn end(&self, i: usize, with_duration: bool) -> Option<i64> {
        self.ends.get(i).and_then(|e| e[usize::from(with_duration)])
    }

    /// The sizes of stream `i`'s packets seen, in order (at most 65536).
    pub fn sizes(&self, i: usize) -> &[u32] {
        self.sizes.get(i).map(Vec::as_slice).unwrap_or(&[])
    }

    /// [`Timing::sizes`] without a last packet cut by the end of the input
    /// (a parser does not finish that frame).
    pub fn whole_sizes(&self, i: usize) -> &[u32] {
        let sizes = self.sizes(i);
        match (self.cut.get(i), sizes.split_last()) {
            (Some(true), Some((_, rest))) => rest,
            _ => sizes,
        }
    }

    /// The first four bytes of the packets of [`Timing::whole_sizes`].
    pub fn whole_heads(&self, i: usize) -> &[[u8; 4]] {
        let heads = self.heads.get(i).map(Vec::as_slice).unwrap_or(&[]);
        heads.get(..self.whole_sizes(i).len()).unwrap_or(heads)
    }

    /// Where stream `i`'s first packet lies in the input.
    pub fn first_pos(&self, i: usize) -> Option<u64> {
        self.first_pos.get(i).copied().flatten()
    }

    /// The first bytes of stream `i`'s first packet (empty when none).
    pub fn first_packet(&self, i: usize) -> &[u8] {
        self.first.get(i).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether every stream has its [`PROBE_PACKETS`].
    pub fn full(&self) -> bool {
        self.streams.iter().all(|s| s.len() >= PROBE_PACKETS)
    }

    /// Stream `i`'s facts.
    pub fn facts(&self, i: usize, t: &Track, format: FormatKind) -> StreamTiming {
        let stamps = self.streams.get(i).map(Vec::as_slice).unwrap_or(&[]);
        // MP4 marks the packets before an edit's start discarded; ffmpeg's
        // start time is that of the edit (the first packet's time plus the
        // samples skipped), which is where the kept packets begin.
        let kept = stamps.iter().filter(|s| !s.discard).filter_map(|s| s.pts).min();
        let start_pts = match kept {
            Some(k) if format == FormatKind::Mp4 && stamps.iter().any(|s| s.discard) => Some(k.max(0)),
            // An MP4 audio packet that straddles an edit's start keeps its
            // earlier time, and ffmpeg skips the samples before the edit
            // (`skip_samples`, added to the start time): the stream starts
            // where the edit does, at 0.
            Some(k) if format == FormatKind::Mp4 && t.kind == TrackKind::Audio && k < 0 => Some(0),
            _ => stamps.iter().filter_map(|s| s.pts).min(),
        };
        let (r, avg) = match t.kind {
            TrackKind::Video if t.attached_picture => ((90_000, 1), (0, 0)),
            TrackKind::Video => video_rates(stamps, t, format),
            _ => ((0, 0), (0, 0)),
        };
        StreamTiming {
            start_pts,
            r_frame_rate: r,
            avg_frame_rate: avg,
            first_pts: stamps.first().and_then(|s| s.pts),
        }
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `num/den` in lowest terms, both at most `max` (ffmpeg's `av_reduce`,
/// by continued fractions when the exact value does not fit).
pub fn reduce(num: u64, den: u64, max: u64) -> (u64, u64) {
    if num == 0 || den == 0 {
        return (0, if den == 0 { 0 } else { 1 });
    }
    let g = gcd(num, den);
    let (n, d) = (num / g, den / g);
    if n <= max && d <= max {
        return (n, d);
    }
    // Best convergent within bounds.
    let (mut a0, mut b0, mut a1, mut b1) = (0u64, 1u64, 1u64, 0u64);
    let (mut x, mut y) = (n, d);
    while y != 0 {
        let q = x / y;
        let a2 = q.saturating_mul(a1).saturating_add(a0);
        let b2 = q.saturating_mul(b1).saturating_add(b0);
        if a2 > max || b2 > max {
            break;
        }
        (a0, b0, a1, b1) = (a1, b1, a2, b2);
        (x, y) = (y, x % y);
    }
    (a1, b1)
}

/// ffmpeg's standard frame rates, in units of 1/(12 * 1001) fps, in the
/// order it tries them (`get_std_framerate`).
fn std_rates() -> impl Iterator<Item = u64> {
    let twelfths = (1..=360u64).map(|k| k * 1001);
    let ints = (61..=90u64).map(|k| k * 1001 * 12);
    let high = [80u64, 120, 240].into_iter().map(|k| k * 1001 * 12);
    let ntsc = [24u64, 30, 60, 12, 15, 48].into_iter().map(|k| k * 1000 * 12);
    twelfths.chain(ints).chain(high).chain(ntsc)
}

const STD_DEN: u64 = 12 * 1001;

/// Raw elementary streams carry no rate: ffmpeg's raw demuxers assume 25.
fn raw_video(format: FormatKind) -> bool {
    matches!(
        format,
        FormatKind::H264 | FormatKind::Hevc | FormatKind::MpegVideo | FormatKind::M4v
    )
}

fn video_rates(stamps: &[Stamp], t: &Track, format: FormatKind) -> ((u64, u64), (u64, u64)) {
    let tb_num = u64::from(t.time_base.num);
    let tb_den = u64::from(t.time_base.den);
    if tb_num == 0 || tb_den == 0 {
        return ((0, 0), (0, 0));
    }
    if raw_video(format) {
        return ((25, 1), (25, 1));
    }
    let stamps = stamps.get(..analysed(stamps, t)).unwrap_or(stamps);
    // dts steps (pts when a container gives no dts).
    let times: Vec<i64> = stamps.iter().filter_map(|s| s.dts.or(s.pts)).collect();
    let steps: Vec<u64> = times
        .windows(2)
        .filter_map(|w| match w {
            [a, b] => u64::try_from(b.saturating_sub(*a)).ok().filter(|&d| d > 0),
            _ => None,
        })
        .collect();
    let fallback = reduce(tb_den, tb_num, i32::MAX as u64);

    // avg_frame_rate.
    let mut avg = (0, 0);
    if format == FormatKind::Mp4 {
        if let (Some(n), Some(d)) = (t.frames, t.duration) {
            if n > 0 && d > 0 && d < u64::from(u32::MAX) {
                avg = reduce(n.saturating_mul(tb_den), d.saturating_mul(tb_num), i32::MAX as u64);
            }
        }
    }
    // ffmpeg's IVF packets carry no duration, and its mean sums packet
    // durations: IVF has none.
    if avg == (0, 0) && stamps.len() > 1 && format != FormatKind::Ivf {
        // Durations of the packets after the first (ffmpeg counts from the
        // second frame), from the container or the dts steps.
        let durs: Vec<u64> = stamps
            .iter()
            .skip(1)
            .zip(steps.iter().chain(core::iter::repeat(&0)))
            .map(|(s, &st)| s.duration.filter(|&d| d > 0).unwrap_or(st))
            .collect();
        let total: u64 = durs.iter().sum();
        if total > 0 {
            let n = durs.len() as u64;
            let raw = reduce(n.saturating_mul(tb_den), total.saturating_mul(tb_num), 60_000);
            avg = snap(raw, 0.01).unwrap_or(raw);
        }
    }

    // r_frame_rate.
    let cfr = !steps.is_empty() && steps.iter().all(|&s| Some(&s) == steps.first());
    let r = if format == FormatKind::Mp4 && cfr {
        steps
            .first()
            .map(|&s| reduce(tb_den, tb_num.saturating_mul(s), i32::MAX as u64))
            .unwrap_or(fallback)
    } else if steps.is_empty() {
        fallback
    } else {
        let unreliable =
            tb_den >= 101 * tb_num || tb_den < 5 * tb_num || matches!(t.codec, Codec::Mpeg2Video | Codec::H264);
        let g = steps.iter().fold(0, |g, &s| gcd(g, s));
        if unreliable && steps.len() > 15 && g > (tb_den / (500 * tb_num)).max(1) {
            reduce(tb_den, tb_num.saturating_mul(g), i32::MAX as u64)
        } else if unreliable && steps.len() > 1 {
            best_std(&times, tb_num, tb_den).unwrap_or(fallback)
        } else {
            fallback
        }
    };
    (r, avg)
}

/// The standard rate within `tolerance` (relative) of `rate`, nearest first.
fn snap(rate: (u64, u64), tolerance: f64) -> Option<(u64, u64)> {
    if rate.1 == 0 || rate.0 == 0 {
        return None;
    }
    let v = rate.0 as f64 / rate.1 as f64;
    let mut best: Option<(f64, u64)> = None;
    for s in std_rates() {
        let e = (v / (s as f64 / STD_DEN as f64) - 1.0).abs();
        if e < best.map_or(tolerance, |b| b.0) {
            best = Some((e, s));
        }
    }
    best.map(|(_, s)| reduce(s, STD_DEN, i32::MAX as u64))
}

/// ffmpeg's `ff_rfps_calculate`: the standard rate on whose ticks the
/// timestamps fall with the least variance of their offsets (at either of
/// two half-tick phases), not above 1% over the time base's reciprocal
/// (its reference rate when none is set; not the mean rate, which a
/// gap in the first timestamps lowers).
fn best_std(times: &[i64], tb_num: u64, tb_den: u64) -> Option<(u64, u64)> {
    let first = *times.first()?;
    let last = *times.last()?;
    // ffmpeg adds each timestamp after the first, in seconds from 0.
    let secs: Vec<f64> = times
        .iter()
        .skip(1)
        .map(|&t| t as f64 * tb_num as f64 / tb_den as f64)
        .collect();
    let n = secs.len() as f64;
    let span = (last - first) as f64 * tb_num as f64 / tb_den as f64;
    let mean_step = span / n;
    let mut best_err = 0.01;
    let mut best = None;
    for s in std_rates() {
        let fps = s as f64 / STD_DEN as f64;
        // Rates with a frame longer than all that was read, or more than
        // 1.25 times the mean step, are not candidates.
        if span < 1.0 / fps || mean_step < 0.8 / fps {
            continue;
        }
        // Sums of the offsets and their squares at both phases; every 10
        // timestamps ffmpeg drops a rate whose variance exceeds 0.04 at both.
        let (mut sum, mut sq) = ([0.0f64; 2], [0.0f64; 2]);
        let mut dropped = false;
        for (i, &x) in secs.iter().enumerate() {
            let ticks = x * fps;
            for k in 0..2 {
                let half = k as f64 * 0.5;
                let e = ticks - (ticks + half).round() + half;
                sum[k] += e;
                sq[k] += e * e;
            }
            let c = (i + 1) as f64;
            if (i + 1) % 10 == 0 && (0..2).all(|k| sq[k] / c - (sum[k] / c).powi(2) > 0.04) {
                dropped = true;
                break;
            }
        }
        if dropped {
            continue;
        }
        for k in 0..2 {
            let a = sum[k] / n;
            let err = sq[k] / n - a * a;
            if err < best_err && best_err > 1e-9 {
                best_err = err;
                best = Some(s);
            }
        }
    }
    let s = best?;
    // ffmpeg's "not more than 1% above" compares with its reference rate,
    // which here (no rate set yet) is the time base's reciprocal.
    if s as f64 / STD_DEN as f64 >= 1.01 * (tb_den as f64 / tb_num as f64) {
        return None;
    }
    Some(reduce(s, STD_DEN, i32::MAX as u64))
}

/// `num/den` as ffprobe prints a rate.
pub fn rate_string(r: (u64, u64)) -> String {
    format!("{}/{}", r.0, r.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaslice::Rational;

    fn video(tb: (u32, u32)) -> Track {
        Track {
            kind: TrackKind::Video,
            codec: Codec::Vp9,
            time_base: Rational::new(tb.0, tb.1),
            ..Track::default()
        }
    }

    fn feed(t: &mut Timing, stamps: &[(i64, i64)]) {
        for &(pts, dts) in stamps {
            t.observe(&Packet {
                pts: Some(pts),
                dts: Some(dts),
                ..Packet::contiguous(0, 0, &[])
            });
        }
    }

    #[test]
    fn reduce_matches_av_reduce() {
        assert_eq!(reduce(30_000, 1001, 1 << 31), (30_000, 1001));
        assert_eq!(reduce(90_000, 3000, 1 << 31), (30, 1));
        assert_eq!(reduce(0, 5, 10), (0, 1));
        let (n, d) = reduce(1_000_000, 33_367, 60_000);
        assert!(n <= 60_000 && d <= 60_000);
        assert!((n as f64 / d as f64 - 1e6 / 33_367.0).abs() < 1e-6);
    }

    #[test]
    fn ntsc_in_milliseconds_snaps_to_30000_1001() {
        let mut t = Timing::new(1);
        // Rounded to milliseconds, as Matroska stores them.
        let ms: Vec<(i64, i64)> = (0..41).map(|i| ((i * 1001 + 15) / 30, (i * 1001 + 15) / 30)).collect();
        feed(&mut t, &ms);
        let f = t.facts(0, &video((1, 1000)), FormatKind::Matroska);
        assert_eq!(f.r_frame_rate, (30_000, 1001));
        assert_eq!(f.avg_frame_rate, (30_000, 1001));
        assert_eq!(f.start_pts, Some(0));
    }

    #[test]
    fn mp4_cfr_takes_the_sample_delta_and_table() {
        let mut t = Timing::new(1);
        // B-frames: pts reordered, first shown at 2002.
        feed(&mut t, &[(2002, 0), (6006, 1001), (4004, 2002), (10010, 3003)]);
        let mut tr = video((1, 30_000));
        tr.frames = Some(30);
        tr.duration = Some(30_030);
        let f = t.facts(0, &tr, FormatKind::Mp4);
        assert_eq!(f.start_pts, Some(2002));
        assert_eq!(f.r_frame_rate, (30_000, 1001));
        assert_eq!(f.avg_frame_rate, (30_000, 1001));
    }

    #[test]
    fn gcd_of_steps_in_a_fine_time_base() {
        let mut t = Timing::new(1);
        let s: Vec<(i64, i64)> = (0..21).map(|i| (i * 3000, i * 3000)).collect();
        feed(&mut t, &s);
        let f = t.facts(0, &video((1, 90_000)), FormatKind::MpegTs);
        assert_eq!(f.r_frame_rate, (30, 1));
    }

    #[test]
    fn no_steps_fall_back() {
        let mut t = Timing::new(2);
        feed(&mut t, &[(0, 0)]);
        let f = t.facts(0, &video((1, 1000)), FormatKind::Matroska);
        assert_eq!(f.r_frame_rate, (1000, 1));
        assert_eq!(f.avg_frame_rate, (0, 0));
        let a = Track {
            kind: TrackKind::Audio,
            ..Track::default()
        };
        assert_eq!(t.facts(1, &a, FormatKind::Matroska).r_frame_rate, (0, 0));
        assert_eq!(t.facts(0, &video((1, 1)), FormatKind::H264).r_frame_rate, (25, 1));
    }

    #[test]
    fn raw_end_takes_the_pes_packets_times() {
        let data = [0u8; 100];
        let mut t = Timing::new(2);
        // Transport stream: two PES packets (at 0 and 376) of two frames
        // each, every frame stating its PES packet's position.
        for (pos, pts) in [(0, 0), (0, 2880), (376, 5760), (376, 8640)] {
            let p = Packet::joined(0, Some(pos), &data[..50]).with_times(Some(pts), Some(pts), None);
            t.observe(&p);
        }
        assert_eq!(t.raw_end(0), Some(5760));
        assert_eq!(t.end(0, false), Some(8640));
        // Program stream: frames state their own contiguous positions; a
        // PES header (a gap) begins the next packet.
        for (pos, pts) in [(20, 0), (70, 3134), (140, 6268), (190, 9402)] {
            let p = Packet::contiguous(1, pos, &data[..50]).with_times(Some(pts), Some(pts), None);
            t.observe(&p);
        }
        assert_eq!(t.raw_end(1), Some(6268));
    }

    #[test]
    fn mp4_audio_straddling_an_edit_starts_at_the_edit() {
        // AMR in 3GP with an edit from media time 50: the first 160-tick
        // frame runs from -50 to 110.
        let mut t = Timing::new(1);
        feed(&mut t, &[(-50, -50), (110, 110), (270, 270)]);
        let a = Track {
            kind: TrackKind::Audio,
            time_base: Rational::new(1, 8000),
            ..Track::default()
        };
        assert_eq!(t.facts(0, &a, FormatKind::Mp4).start_pts, Some(0));
        // Other containers state the packet's time.
        assert_eq!(t.facts(0, &a, FormatKind::Matroska).start_pts, Some(-50));
    }

    #[test]
    fn a_gap_in_the_first_frames_does_not_hide_the_standard_rate() {
        // H.264 in MPEG-TS at 24 fps with 90 kHz jitter, two frames
        // missing after the first: the mean rate is 21.8 fps, and ffmpeg
        // still finds 24 (its 1% bound is over the time base's rate).
        let mut t = Timing::new(1);
        let mut ts: Vec<i64> = vec![0];
        ts.extend((3..23).map(|i| (i * 3750) - i64::from(i % 3 == 1)));
        let s: Vec<(i64, i64)> = ts.iter().map(|&x| (x, x)).collect();
        feed(&mut t, &s);
        let mut v = video((1, 90_000));
        v.codec = Codec::H264;
        assert_eq!(t.facts(0, &v, FormatKind::MpegTs).r_frame_rate, (24, 1));
    }
}
