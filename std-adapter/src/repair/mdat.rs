//! The lost-`moov` route: an MP4/MOV whose `mdat` was written and whose
//! `moov` was not (power lost while recording), read with a good file from
//! the same device (`--reference`) standing in for the index, as untrunc
//! does.
//!
//! From the reference: the tracks (sample entries and codec configuration,
//! time scales), each track's usual frame duration (the most frequent
//! sample duration among its first [`REFERENCE_PACKETS`] packets), the NAL
//! length size (avcC/hvcC `lengthSizeMinusOne`), and for PCM the bytes of a
//! sample frame and the usual packet size.
//!
//! The damaged file's `mdat` is walked NAL by NAL (H.264: ITU-T H.264
//! §7.3.1 and §7.4.1.2.3; H.265: ITU-T H.265 §7.3.1.2 and §7.4.2.4.4): an
//! access unit starts at a VCL NAL unit whose `first_mb_in_slice` is 0
//! (`first_slice_segment_in_pic_flag` 1), or at an AUD, SPS, PPS or prefix
//! SEI before one; a keyframe holds an IDR (IRAP) slice. Bytes that do not
//! read as a NAL unit are another track's chunk: the walk looks for the
//! next place where two plausible NAL units follow each other, the first
//! beginning an access unit (and, with a PCM track, at a whole number of
//! sample frames from the gap's start). A gap is PCM audio when the
//! reference has a PCM track; otherwise it is dropped and reported (AAC and
//! other compressed audio carry no length of their own in `mdat`: without
//! the index their frames cannot be cut soundly, so they are left out).
//!
//! Times come from the reference's durations: video decoding times step by
//! the frame duration and presentation time equals decoding time (B-frame
//! reordering is not recovered); PCM times count sample frames.

use super::*;
use mediaslice::types::rescale_q;
use mediaslice::{Codec, Source};

/// Packets of the reference read per track for its durations and sizes.
const REFERENCE_PACKETS: usize = 2000;

/// The largest access unit the walk accepts (a bound on what one output
/// sample may claim).
const MAX_ACCESS_UNIT: u64 = 64 << 20;

/// The walk's sample index kept in memory before it spills to the
/// temporary file: 256 KiB, about 85,000 video samples of a recording
/// (about 3 bytes each). A 4.5 GiB walk spills about 10 MB either way;
/// with 1 MiB (the remux default) and the default combining buffer (see
/// [`COMBINE`]) its peak RSS was 0.9 MiB higher, in the same time
/// (`docs/repair.md`).
const INDEX_MEMORY: usize = 256 << 10;

/// The output's combining buffer: 64 KiB (the walk's appends are single
/// access units, most far shorter), one `write` per 64 KiB, against
/// 256 KiB by default.
const COMBINE: usize = 64 << 10;

/// What the walk knows of the video track.
#[derive(Debug, Clone, Copy)]
struct Video {
    /// Its index in the reference.
    index: usize,
    /// H.265 rather than H.264.
    hevc: bool,
    /// Bytes of each NAL unit's length prefix (1, 2 or 4).
    nal_len: u64,
    /// Decoding time step, in the track's time base.
    duration: u64,
    /// The longest NAL unit accepted: four times the reference's largest
    /// sample (at least 256 KiB): random bytes read as a length rarely
    /// fall under it.
    max_nal: u64,
    /// The shortest slice NAL unit video may resume at: 8 bytes, or the
    /// reference's smallest sample less its length prefix when that is
    /// shorter (at least 3), since a few zero bytes of audio read as a
    /// tiny length.
    min_resume: u64,
    /// H.264: bits of `frame_num` (from the reference's SPS), to check
    /// that a picture video resumes at follows the last one.
    frame_num_bits: Option<u32>,
}

/// What the walk knows of the PCM track.
#[derive(Debug, Clone, Copy)]
struct Pcm {
    /// Its index in the reference.
    index: usize,
    /// Bytes of one sample frame (all channels).
    frame: u64,
    /// The reference's usual packet size (a whole number of frames).
    packet: u64,
    /// Sample rate (frames a second).
    rate: u32,
    /// The track's time base.
    time_base: Rational,
}

/// The most frequent value of `v` (the first of equals), if any.
fn most_frequent(v: &[u64]) -> Option<u64> {
    let mut best: Option<(u64, usize)> = None;
    for &x in v {
        let n = v.iter().filter(|&&y| y == x).count();
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((x, n));
        }
    }
    best.map(|(x, _)| x)
}

/// A NAL unit's header facts.
#[derive(Debug, Clone, Copy)]
struct Nal {
    /// Where its length prefix ends and its bytes end.
    end: u64,
    /// A coded slice.
    vcl: bool,
    /// A slice that begins a picture.
    first_in_pic: bool,
    /// A NAL unit that begins an access unit when it follows a slice (AUD,
    /// parameter sets, prefix SEI).
    opens_au: bool,
    /// An IDR/IRAP slice.
    key: bool,
}

impl Video {
    /// The NAL unit at `pos` if its length and header are plausible and it
    /// ends by `end`.
    fn nal_at<S: Source>(&self, src: &mut S, pos: u64, end: u64) -> Option<Nal> {
        let body = pos.checked_add(self.nal_len)?;
        if body.checked_add(3)? > end {
            return None;
        }
        let head = src.bytes(pos, self.nal_len as usize + 3).ok()?;
        let (prefix, h) = head.split_at(self.nal_len as usize);
        let len = prefix.iter().fold(0u64, |a, &b| a << 8 | u64::from(b));
        let nal_end = body.checked_add(len)?;
        // An H.264 AUD is 2 bytes (header and primary_pic_type), an H.265
        // one 3; a slice has more.
        if len < 2 || len > self.max_nal || nal_end > end {
            return None;
        }
        let (h0, h1) = (*h.first()?, *h.get(1)?);
        // Past a 2-byte NAL unit this is the next one's prefix: only a
        // slice reads it, and a slice is longer.
        let h2 = if len > 2 { *h.get(2)? } else { 0 };
        if h0 & 0x80 != 0 {
            return None;
        }
        if self.hevc {
            let kind = (h0 >> 1) & 0x3F;
            let layer = ((h0 & 1) << 5) | (h1 >> 3);
            if layer != 0 || h1 & 7 == 0 || !matches!(kind, 0..=9 | 16..=21 | 32..=40) {
                return None;
            }
            if len < 3 && kind != 35 {
                return None;
            }
            Some(Nal {
                end: nal_end,
                vcl: kind < 32,
                first_in_pic: kind < 32 && h2 & 0x80 != 0,
                opens_au: matches!(kind, 32..=35 | 39),
                key: (16..=23).contains(&kind),
            })
        } else {
            let kind = h0 & 0x1F;
            let referenced = h0 & 0x60 != 0;
            // Slice data partitions (2 to 4) belong to the Extended
            // profile only, which recorders do not use: taking them would
            // let more audio bytes read as video.
            let ok = match kind {
                1 => true,
                5 | 7 | 8 => referenced,
                6 | 9..=12 => !referenced,
                14 | 15 | 19 | 20 => true,
                _ => false,
            };
            if !ok || (len < 3 && kind != 9) {
                return None;
            }
            Some(Nal {
                end: nal_end,
                vcl: kind == 1 || kind == 5,
                first_in_pic: (kind == 1 || kind == 5) && h1 & 0x80 != 0,
                opens_au: matches!(kind, 6..=9),
                key: kind == 5,
            })
        }
    }

    /// Whether video resumes at `pos`: a run of plausible NAL units that
    /// begins an access unit (an AUD, parameter set or SEI, at most
    /// [`LEADING_NALS`] of them, or the slice itself) and reaches a slice
    /// that begins a picture, whose header reads (slice type and parameter
    /// set id in range), that holds no byte sequence emulation prevention
    /// forbids, that is not shorter than the reference suggests, and that
    /// follows the last picture (`last`); with no last picture it must be a
    /// keyframe (IDR/IRAP), where decoding can start.
    fn resumes_at<S: Source>(&self, src: &mut S, pos: u64, end: u64, last: Option<(u32, bool)>) -> bool {
        let mut at = pos;
        for _ in 0..LEADING_NALS {
            let Some(n) = self.nal_at(src, at, end) else {
                return false;
            };
            if n.first_in_pic {
                if n.end - at - self.nal_len < self.min_resume || !(n.key || last.is_some()) {
                    return false;
                }
                let body_at = at + self.nal_len;
                let body = slice(src, (body_at, n.end.min(body_at + RESUME_SCAN as u64)));
                let head = body.get(..8).unwrap_or(body);
                return self.slice_header_reads(head, n.key) && escaped(body) && self.follows(head, n.key, last);
            }
            if n.vcl || (at == pos && !n.opens_au) {
                return false;
            }
            at = n.end;
        }
        false
    }

    /// H.264: the `frame_num` of the slice NAL unit `nal` (ITU-T H.264
    /// §7.3.3), when the reference's SPS gave its size.
    fn frame_num(&self, nal: &[u8]) -> Option<u32> {
        let bits_len = self.frame_num_bits?;
        let mut bits = Bits { data: nal, at: 8 };
        bits.ue()?;
        bits.ue()?;
        bits.ue()?;
        let mut v = 0u32;
        for _ in 0..bits_len {
            v = v << 1 | bits.bit()?;
        }
        Some(v)
    }

    /// Whether a picture with slice header `head` may follow the last
    /// picture written (`last`: its `frame_num` and whether it was a
    /// reference): an IDR has `frame_num` 0 (H.264 §7.4.3), another picture
    /// the last one's or the next. Without H.264 or a last picture, true.
    fn follows(&self, head: &[u8], key: bool, last: Option<(u32, bool)>) -> bool {
        let (Some(bits), Some(f)) = (self.frame_num_bits, self.frame_num(head)) else {
            return true;
        };
        if key {
            return f == 0;
        }
        let Some((prev, _)) = last else { return true };
        let max = 1u32 << bits;
        f == prev || f == (prev + 1) % max
    }

    /// Whether the slice header at the start of NAL unit `nal` reads: H.264
    /// `first_mb_in_slice`, `slice_type` (0 to 9; an I type in an IDR) and
    /// `pic_parameter_set_id` (below 64 here; the standard allows 256, a
    /// recorder uses a few); H.265 `slice_pic_parameter_set_id` below 64.
    fn slice_header_reads(&self, nal: &[u8], key: bool) -> bool {
        let mut bits = Bits { data: nal, at: 0 };
        if self.hevc {
            bits.at = 16 + 1 + usize::from(key);
            return bits.ue().is_some_and(|pps| pps < 64);
        }
        bits.at = 8;
        let (Some(0), Some(kind), Some(pps)) = (bits.ue(), bits.ue(), bits.ue()) else {
            return false;
        };
        kind <= 9 && pps < 64 && (!key || matches!(kind % 5, 2 | 4))
    }
}

/// The size of `frame_num` in bits from an avcC's first SPS (ITU-T H.264
/// §7.3.2.1.1: `log2_max_frame_num_minus4` + 4), or `None` when the SPS
/// carries scaling matrices (not walked here) or does not read.
fn frame_num_bits(avcc: &[u8]) -> Option<u32> {
    let len = usize::from(u16::from_be_bytes([*avcc.get(6)?, *avcc.get(7)?]));
    let sps = avcc.get(8..8 + len)?;
    // Emulation prevention removed from the first bytes: the fields needed
    // are near the start.
    let mut raw = Vec::with_capacity(64);
    let mut zeros = 0;
    for &b in sps.iter().take(64) {
        if zeros >= 2 && b == 3 {
            zeros = 0;
            continue;
        }
        zeros = if b == 0 { zeros + 1 } else { 0 };
        raw.push(b);
    }
    let profile = *raw.get(1)?;
    let mut bits = Bits { data: &raw, at: 32 };
    bits.ue()?;
    if matches!(
        profile,
        100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135
    ) {
        if bits.ue()? == 3 {
            // separate_colour_plane_flag: colour_plane_id in each slice.
            return None;
        }
        bits.ue()?;
        bits.ue()?;
        bits.bit()?;
        if bits.bit()? == 1 {
            return None;
        }
    }
    let v = bits.ue()?;
    (v <= 12).then_some(v + 4)
}

/// Most NAL units before the first slice of a picture where video resumes
/// (AUD, parameter sets, SEI).
const LEADING_NALS: usize = 8;

/// Bytes of a candidate NAL unit checked for emulation prevention.
const RESUME_SCAN: usize = 512;

/// Whether `nal` holds none of the three-byte sequences 0x000000,
/// 0x000001, 0x000002, which emulation prevention keeps out of every NAL
/// unit (ITU-T H.264 §7.4.1, H.265 §7.4.2): audio bytes read as a NAL unit
/// usually hold one.
fn escaped(nal: &[u8]) -> bool {
    !nal.windows(3).any(|w| w[0] == 0 && w[1] == 0 && w[2] <= 2)
}

/// A bit reader over a few bytes, for Exp-Golomb codes (ITU-T H.264 §9.1).
struct Bits<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bits<'_> {
    /// The next bit.
    fn bit(&mut self) -> Option<u32> {
        let byte = self.data.get(self.at / 8)?;
        let b = (byte >> (7 - self.at % 8)) & 1;
        self.at += 1;
        Some(u32::from(b))
    }

    /// The next `ue(v)`, at most 16 leading zeros.
    fn ue(&mut self) -> Option<u32> {
        let mut zeros = 0;
        while self.bit()? == 0 {
            zeros += 1;
            if zeros > 16 {
                return None;
            }
        }
        let mut v = 0u32;
        for _ in 0..zeros {
            v = v << 1 | self.bit()?;
        }
        Some((1u32 << zeros) - 1 + v)
    }
}

/// The reference's tracks prepared, the video and PCM tracks chosen, and
/// why each other track is left out. The PCM track is written when the
/// output is MOV (`mov`), which alone takes uncompressed audio; for MP4 it
/// is left out and only steps the walk. Read through the source `S`, as
/// the input is.
fn read_reference<S: InputSource>(
    reference: &Path,
    mov: bool,
) -> Result<(Vec<crate::remux::PreparedTrack>, Video, Option<Pcm>), RepairError> {
    let ext = reference.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    S::open_path(reference).map_err(RepairError::Io)?;
    let open = || S::open_demuxer(reference, ext.as_deref());
    let d = open().map_err(|e| RepairError::Reference(e.to_string()))?;
    if d.format() != FormatKind::Mp4 {
        return Err(RepairError::Reference(format!(
            "{} is not an MP4/MOV file",
            reference.display()
        )));
    }
    drop(d);
    let mut tracks = prepare_tracks(&open).map_err(|e| RepairError::Reference(e.to_string()))?;
    // Durations and sizes of each track's first packets.
    let mut durations: Vec<Vec<u64>> = vec![Vec::new(); tracks.len()];
    let mut sizes: Vec<Vec<u64>> = vec![Vec::new(); tracks.len()];
    let mut d = open().map_err(|e| RepairError::Reference(e.to_string()))?;
    while let Ok(Some(p)) = d.next_packet() {
        if let (Some(du), Some(sz)) = (durations.get_mut(p.track), sizes.get_mut(p.track)) {
            if du.len() < REFERENCE_PACKETS {
                du.extend(p.duration);
                sz.push(p.data.len() as u64);
            }
        }
        if durations.iter().all(|v| v.len() >= REFERENCE_PACKETS) {
            break;
        }
    }
    let mut video = None;
    let mut pcm = None;
    for (i, t) in tracks.iter_mut().enumerate() {
        if t.skip.is_some() {
            continue;
        }
        let codec = t.track.codec;
        let dur = durations.get(i).and_then(|v| most_frequent(v)).unwrap_or(0);
        match codec {
            Codec::H264 | Codec::Hevc if video.is_none() && t.config.first() == Some(&1) => {
                let hevc = codec == Codec::Hevc;
                let at = if hevc { 21 } else { 4 };
                let nal_len = u64::from(t.config.get(at).map_or(3, |b| b & 3)) + 1;
                if nal_len == 3 || dur == 0 {
                    t.skip = Some("the reference gives no NAL length size or frame duration");
                    continue;
                }
                let largest = sizes.get(i).and_then(|v| v.iter().max()).copied().unwrap_or(0);
                let smallest = sizes.get(i).and_then(|v| v.iter().min()).copied().unwrap_or(0);
                video = Some(Video {
                    index: i,
                    hevc,
                    nal_len,
                    duration: dur,
                    max_nal: largest.saturating_mul(4).clamp(256 << 10, MAX_ACCESS_UNIT),
                    min_resume: smallest.saturating_sub(nal_len).clamp(3, 8),
                    frame_num_bits: if hevc { None } else { frame_num_bits(&t.config) },
                });
            }
            c if c.ffmpeg_name().starts_with("pcm_") && pcm.is_none() => {
                let bits = u64::from(t.track.bits_per_sample);
                let frame = u64::from(t.track.channels) * bits / 8;
                let packet = sizes.get(i).and_then(|v| most_frequent(v)).unwrap_or(0);
                if frame == 0 || t.track.sample_rate == 0 || packet == 0 || packet % frame != 0 {
                    t.skip = Some("PCM whose sample frame size the reference does not give");
                    continue;
                }
                // MP4 output takes no PCM (as ffmpeg's): the track is left
                // out there, its frame size still steps the search for
                // video. MOV takes it with the sample rate as time base.
                if mov {
                    t.track.time_base = Rational::new(1, t.track.sample_rate);
                } else {
                    t.skip = Some("PCM goes in MOV output only (repair to a .mov OUT to keep it); its chunks are stepped over");
                }
                pcm = Some(Pcm {
                    index: i,
                    frame,
                    packet,
                    rate: t.track.sample_rate,
                    time_base: t.track.time_base,
                });
            }
            Codec::H264 | Codec::Hevc => t.skip = Some("a second video track: only one is walked"),
            _ if t.track.kind == mediaslice::TrackKind::Audio => {
                t.skip = Some(
                    "compressed audio (AAC and the like) has no length of its own in mdat: without the index its frames cannot be cut soundly",
                )
            }
            _ => t.skip = Some("only H.264/H.265 video and PCM audio are recovered without an index"),
        }
    }
    let video = video.ok_or_else(|| {
        RepairError::Reference("no H.264/H.265 track with an avcC/hvcC to walk the mdat by".to_owned())
    })?;
    Ok((tracks, video, pcm))
}

/// The writing state of the walk: muxer, output track indexes, counts.
struct Writer<'m> {
    muxer: Muxer<FileSink, Vec<u8>, &'m mut crate::TempSpill>,
    map: &'m [Option<usize>],
    counts: [Count; mediaslice::MAX_TRACKS],
    frames: u64,
    samples: u64,
}

impl Writer<'_> {
    /// Writes the access unit `range` of `data` as the next video frame.
    fn video<S: Source>(&mut self, src: &mut S, v: &Video, range: (u64, u64), key: bool) -> Result<(), RepairError> {
        let Some(&Some(track)) = self.map.get(v.index) else {
            return Ok(());
        };
        let bytes = slice(src, range);
        let ts = i64::try_from(self.frames.saturating_mul(v.duration)).unwrap_or(i64::MAX);
        let mut p = Packet::contiguous(track, range.0, bytes).with_times(Some(ts), Some(ts), Some(v.duration));
        p.flags.keyframe = key;
        self.muxer.write_packet(&p).map_err(out_err)?;
        if let Some(c) = self.counts.get_mut(v.index) {
            c.add(bytes.len(), Some(ts), Some(v.duration));
        }
        self.frames += 1;
        Ok(())
    }

    /// Writes the PCM chunk `range` of `data` in packets of the reference's
    /// size.
    fn pcm<S: Source>(&mut self, src: &mut S, a: &Pcm, range: (u64, u64)) -> Result<(), RepairError> {
        let Some(&Some(track)) = self.map.get(a.index) else {
            return Ok(());
        };
        let mut at = range.0;
        while at < range.1 {
            let end = (at + a.packet).min(range.1);
            let bytes = slice(src, (at, end));
            let frames = (end - at) / a.frame;
            let tb = Rational::new(1, a.rate);
            let ts = rescale_q(i64::try_from(self.samples).unwrap_or(i64::MAX), tb, a.time_base);
            let du = u64::try_from(rescale_q(i64::try_from(frames).unwrap_or(0), tb, a.time_base)).unwrap_or(0);
            let mut p = Packet::contiguous(track, at, bytes).with_times(Some(ts), Some(ts), Some(du));
            p.flags.keyframe = true;
            self.muxer.write_packet(&p).map_err(out_err)?;
            if let Some(c) = self.counts.get_mut(a.index) {
                c.add(bytes.len(), Some(ts), Some(du));
            }
            self.samples += frames;
            at = end;
        }
        Ok(())
    }
}

/// The input's bytes in `range` through the source (a map releases the
/// pages it served past its resident limit, positioned reads copy into a
/// scratch, so the walk's RSS stays bounded either way), empty when out of
/// bounds (the walk never asks that).
fn slice<S: Source>(src: &mut S, (a, b): (u64, u64)) -> &[u8] {
    let len = usize::try_from(b.saturating_sub(a)).unwrap_or(0);
    src.bytes(a, len).unwrap_or(&[])
}

fn out_err(e: mediaslice::Error) -> RepairError {
    RepairError::Output(RemuxError::Output(e))
}

/// Walks the `mdat` payload `(start, end)` of the input `src` with the reference's
/// tracks and writes a progressive MP4 (MOV when `output` ends in `.mov`).
pub(super) fn repair_mdat<S: InputSource>(
    mut src: S,
    (start, end): (u64, u64),
    reference: &Path,
    output: &Path,
) -> Result<RepairReport, RepairError> {
    let format = if output.extension().is_some_and(|e| e.eq_ignore_ascii_case("mov")) {
        RemuxFormat::Mov
    } else {
        RemuxFormat::Mp4
    };
    let (tracks, video, pcm) = read_reference::<S>(reference, format == RemuxFormat::Mov)?;
    let sink = FileSink::create_combining(output, COMBINE).map_err(RepairError::Io)?;
    // Past its memory bound the sample index goes to an unnamed temporary
    // file beside the output, as on the reader's route; the scratch is
    // that bound alone (the index is all the MP4 muxer keeps in it).
    let mut spill = crate::TempSpill::beside(output);
    let mut muxer = Muxer::with_scratch(sink, format.mux_format(), vec![0u8; INDEX_MEMORY])
        .map_err(out_err)?
        .with_index_spill(&mut spill, INDEX_MEMORY);
    let mut remux_report = RemuxReport::default();
    let map = declare_tracks(&mut muxer, &tracks, &mut remux_report).map_err(RepairError::Output)?;
    let mut report = RepairReport {
        method: "mdat walk with reference",
        output_format: Some(format),
        input_bytes: src.len(),
        ..Default::default()
    };
    for (i, why) in &remux_report.skipped {
        report.left_out.push((*i, (*why).to_owned()));
    }
    let mut w = Writer {
        muxer,
        map: &map,
        counts: [Count::default(); mediaslice::MAX_TRACKS],
        frames: 0,
        samples: 0,
    };
    let gap_reason = if pcm.is_some() {
        "not video: PCM audio (left out, see the streams left out)"
    } else {
        "not video: another track's data (left out, see the streams left out)"
    };
    // The access unit being gathered: (start, end, has a slice, keyframe).
    let mut au: Option<(u64, u64, bool, bool)> = None;
    // The gaps that are another track's data: (first offset, runs, bytes).
    let mut gaps: Option<(u64, u64, u64)> = None;
    // The last picture's frame_num and whether it was a reference (H.264).
    let mut last_pic: Option<(u32, bool)> = None;
    let mut pos = start;
    // Whether the walk is inside video: at the start and after a gap,
    // video must resume (see `Video::resumes_at`) before NAL units count.
    let mut in_video = false;
    while pos < end {
        if !in_video && video.resumes_at(&mut src, pos, end, last_pic) {
            in_video = true;
        }
        if let Some(n) = in_video.then(|| video.nal_at(&mut src, pos, end)).flatten() {
            if let Some((s, e, vcl, key)) = au {
                if vcl && (n.opens_au || n.first_in_pic) || n.end - s > MAX_ACCESS_UNIT {
                    w.video(&mut src, &video, (s, e), key)?;
                    au = None;
                }
            }
            if n.first_in_pic {
                let head = slice(&mut src, (pos + video.nal_len, n.end.min(pos + video.nal_len + 8)));
                let reference = head.first().is_some_and(|h| h & 0x60 != 0);
                // H.265 (no frame_num here): only that a picture was seen.
                last_pic = match video.frame_num_bits {
                    Some(_) => video.frame_num(head).map(|f| (f, reference)).or(last_pic),
                    None => Some((0, reference)),
                };
            }
            let (s, _, vcl, key) = au.unwrap_or((pos, pos, false, false));
            au = Some((s, n.end, vcl || n.vcl, key || n.key));
            pos = n.end;
            continue;
        }
        // Not a NAL unit: close the access unit, find where video resumes.
        in_video = false;
        match au.take() {
            Some((s, e, true, key)) => w.video(&mut src, &video, (s, e), key)?,
            Some((s, e, false, _)) => report.drop_range(s, e - s, "parameter sets or SEI with no slice after them"),
            None => {}
        }
        let step = pcm.map_or(1, |a| a.frame);
        let mut next = pos + step;
        while next < end && !video.resumes_at(&mut src, next, end, last_pic) {
            next += step;
        }
        let gap_end = next.min(end);
        match pcm.filter(|a| map.get(a.index).is_some_and(Option::is_some)) {
            Some(a) => {
                let whole = gap_end - (gap_end - pos) % a.frame;
                w.pcm(&mut src, &a, (pos, whole))?;
                if whole < gap_end {
                    report.drop_range(whole, gap_end - whole, "the end of the mdat: part of a PCM frame");
                }
            }
            None => {
                // Counted, not listed one by one: an interleaved file has
                // a gap per audio chunk.
                let (_, runs, bytes) = gaps.get_or_insert((pos, 0, 0));
                *runs += 1;
                *bytes += gap_end - pos;
            }
        }
        pos = gap_end;
    }
    if let Some((s, e, vcl, key)) = au {
        if vcl {
            w.video(&mut src, &video, (s, e), key)?;
        }
    }
    if let Some((first, runs, bytes)) = gaps {
        report.drop_runs(first, runs, bytes, gap_reason);
    }
    if end < src.len() {
        report.drop_range(end, src.len() - end, "after the mdat: not media");
    }
    for (i, t) in tracks.iter().enumerate() {
        if map.get(i).is_some_and(Option::is_some) {
            let c = w.counts.get(i).copied().unwrap_or_default();
            report
                .streams
                .push(c.recovery(i, t.track.codec.ffmpeg_name(), t.track.time_base));
        }
    }
    if report.packets() == 0 {
        return Err(RepairError::NothingRecovered);
    }
    let sink = w.muxer.finish().map_err(out_err)?;
    report.output_bytes = sink.position();
    sink.commit().map_err(RepairError::Io)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An avcC holding one SPS (`sps`, with its NAL header).
    fn avcc(sps: &[u8]) -> Vec<u8> {
        let mut out = vec![1, sps[1], 0, sps[3], 0xFF, 0xE1, 0, sps.len() as u8];
        out.extend_from_slice(sps);
        out
    }

    #[test]
    fn exp_golomb_codes_read() {
        // 1 | 010 | 011 | 00100 | 0001000: 0, 1, 2, 3, 7.
        let data = [0b1010_0110, 0b0100_0001, 0b0000_0000];
        let mut b = Bits { data: &data, at: 0 };
        assert_eq!(
            [b.ue(), b.ue(), b.ue(), b.ue(), b.ue()],
            [Some(0), Some(1), Some(2), Some(3), Some(7)]
        );
        // Runs out of bits: None, not a panic.
        assert_eq!(Bits { data: &[0], at: 0 }.ue(), None);
    }

    #[test]
    fn frame_num_size_from_the_sps() {
        // Baseline: sps_id 0 ('1'), log2_max_frame_num_minus4 0 ('1').
        assert_eq!(frame_num_bits(&avcc(&[0x67, 66, 0, 30, 0b1100_0000])), Some(4));
        // High: sps_id 0, chroma_format_idc 1 ('010'), bit depths 0, 0,
        // qpprime 0, no scaling matrix, log2_max_frame_num_minus4 2 ('011').
        assert_eq!(
            frame_num_bits(&avcc(&[0x67, 100, 0, 40, 0b1010_1100, 0b0110_0000])),
            Some(6)
        );
        // Scaling matrices present: not walked.
        assert_eq!(frame_num_bits(&avcc(&[0x67, 100, 0, 40, 0b1010_1110, 0])), None);
        // Cut short.
        assert_eq!(frame_num_bits(&[1, 66, 0, 30, 0xFF, 0xE1, 0, 9, 0x67]), None);
    }

    #[test]
    fn emulation_prevention_is_checked() {
        assert!(escaped(&[0x41, 0x9a, 0, 0, 3, 0, 0, 3, 1]));
        assert!(!escaped(&[0x41, 0x9a, 0, 0, 1, 5]));
        assert!(!escaped(&[0x41, 0, 0, 0]));
    }

    #[test]
    fn most_frequent_value() {
        assert_eq!(most_frequent(&[512, 512, 1024, 512, 7]), Some(512));
        assert_eq!(most_frequent(&[]), None);
    }

    #[test]
    fn slice_headers_read() {
        let v = Video {
            index: 0,
            hevc: false,
            nal_len: 4,
            duration: 512,
            max_nal: 1 << 20,
            min_resume: 8,
            frame_num_bits: Some(4),
        };
        // P slice (type 5: '00110'), first_mb 0, pps 0, frame_num 3.
        let p = [0x41, 0b1001_1010, 0b0110_0000];
        assert!(v.slice_header_reads(&p, false));
        assert_eq!(v.frame_num(&p), Some(3));
        assert!(v.follows(&p, false, Some((2, true))));
        assert!(v.follows(&p, false, Some((3, false))));
        assert!(!v.follows(&p, false, Some((9, true))));
        // An IDR must be an I slice (type 7: '0001000') with frame_num 0.
        let idr = [0x65, 0b1000_1000, 0b1000_0000];
        assert!(v.slice_header_reads(&idr, true));
        assert!(v.follows(&idr, true, None));
        assert!(!v.slice_header_reads(&p, true));
        // slice_type 12 is out of range.
        assert!(!v.slice_header_reads(&[0x41, 0b1000_0110, 0b1000_0000], false));
    }
}
