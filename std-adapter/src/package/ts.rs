//! `package IN OUTDIR --hls --ts`: HLS with MPEG-TS segments (RFC 8216
//! §3.2). The input goes once through one TS muxer (the one `remux OUT.ts`
//! uses: PCR on the video PID, Annex B with in-band parameter sets, ADTS
//! for AAC), whose byte stream [`SegmentFiles`] writes to `seg_NNNNN.ts`,
//! moving to the next file at a PAT. The packet loop asks for a cut before
//! the first keyframe of the first video track (with no video: the first
//! packet of the first track) at least `--segment` after the segment's
//! start; the muxer writes a PAT and a PMT before every video keyframe, so
//! the cut falls right before that keyframe's PES, and each segment opens
//! with PAT, PMT and a keyframe. Audio alone: the muxer writes PAT/PMT
//! every 100 ms of packet time, so the cut falls at the first of those
//! after the request (a segment is at most 100 ms past `--segment`, and
//! every audio packet is a random access point).
//!
//! One muxer for the whole stream: the continuity counters, the times
//! (90 kHz, from 1.4 s) and the PCR run on across segments, so the
//! concatenated segments are byte for byte what `remux IN OUT.ts` writes.
//!
//! `#EXTINF`: the 90 kHz decode time of the timing track's first packet in
//! the next segment less that of this one (the last: its last packet's
//! end), the times the muxer stamps, so the durations add up to the
//! track's span in the output. `CODECS` comes from the track
//! configurations (there is no init segment): `avcC`/`hvcC` records (built
//! from Annex B parameter sets when the input has those), the
//! AudioSpecificConfig (or the ADTS header's), and fixed strings.
//!
//! Files: each segment is written under `.part` and renamed once the next
//! one starts (or the input ends); a failure removes the open `.part`. The
//! payload is never held: 64 KiB of write buffer.

use super::{
    aac_codecs, avc_codecs, hevc_codecs, write_playlists, FileSplit, Files, Form, PackageReport, Segment, NO_CODECS,
};
use crate::remux::{declare_tracks, for_each_packet, open_mapped, prepare_tracks, start_us, RemuxError, RemuxReport};
use mediaslice::types::rescale_q;
use mediaslice::{Codec, Demuxer, MuxFormat, Muxer, Packet, Rational, Source, TrackKind};
use std::cell::Cell;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

/// Bytes of a TS packet.
const TS_PACKET: u64 = 188;
/// The write buffer of a segment file.
const BUFFER: usize = 64 * 1024;
/// The clock of TS time stamps.
const CLOCK: Rational = Rational::new(1, 90_000);

/// Cuts a TS byte stream into segment files ([`FileSplit`]), the next one
/// starting at the first PAT after [`SegmentFiles::cut`] is set.
struct SegmentFiles {
    dir: PathBuf,
    file: Option<BufWriter<File>>,
    /// Bytes of the stream so far.
    pos: u64,
    /// A cut is wanted at the next PAT (set by the packet loop).
    cut: Cell<bool>,
    /// The segments started (durations filled in at the end).
    segments: Vec<Segment>,
}

impl SegmentFiles {
    fn new(dir: &Path) -> Self {
        SegmentFiles {
            dir: dir.to_path_buf(),
            file: None,
            pos: 0,
            cut: Cell::new(false),
            segments: Vec::new(),
        }
    }

    /// Whether `data`, written at the start of a TS packet, begins a PAT
    /// packet (sync byte, PID 0; ISO/IEC 13818-1 §2.4.3.2). The muxer
    /// hands a packet's 4-byte header over in one piece.
    fn is_pat(&self, data: &[u8]) -> bool {
        self.pos % TS_PACKET == 0 && matches!(data, [0x47, b1, 0, ..] if b1 & 0x1F == 0)
    }

    fn take(&mut self, data: &[u8]) -> std::io::Result<()> {
        if self.file.is_none() || (self.cut.get() && self.is_pat(data)) {
            self.cut.set(false);
            self.end_segment()?;
            let name = format!("seg_{:05}.ts", self.segments.len() + 1);
            let f = File::create(self.dir.join(super::part_name(&name)))?;
            self.file = Some(BufWriter::with_capacity(BUFFER, f));
            self.segments.push(Segment {
                name,
                bytes: 0,
                seconds: 0.0,
                ticks: 0,
            });
        }
        if let Some(f) = self.file.as_mut() {
            f.write_all(data)?;
        }
        if let Some(s) = self.segments.last_mut() {
            s.bytes += data.len() as u64;
        }
        self.pos += data.len() as u64;
        Ok(())
    }

    /// Closes the open segment file and renames it to its name.
    fn end_segment(&mut self) -> std::io::Result<()> {
        let Some(f) = self.file.take() else { return Ok(()) };
        // Not synced, as the CMAF segments are not: hundreds of fsyncs
        // would triple the run (docs/write-side.md).
        drop(f.into_inner().map_err(|e| e.into_error())?);
        let Some(seg) = self.segments.last() else { return Ok(()) };
        std::fs::rename(self.dir.join(super::part_name(&seg.name)), self.dir.join(&seg.name))
    }
}

impl Drop for SegmentFiles {
    /// A segment still open is a failed run's: its `.part` goes.
    fn drop(&mut self) {
        if self.file.take().is_some() {
            if let Some(seg) = self.segments.last() {
                let _ = std::fs::remove_file(self.dir.join(super::part_name(&seg.name)));
            }
        }
    }
}

impl FileSplit for SegmentFiles {
    fn take(&mut self, data: &[u8]) -> std::io::Result<()> {
        SegmentFiles::take(self, data)
    }
    fn flush_file(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), |f| f.flush())
    }
}

/// The `CODECS` string of a track TS carries, from its configuration
/// (RFC 6381 §3.3; the HLS authoring guidelines' `mp4a.40.34` for MP3,
/// and 14496-3's object types 32 and 33 for layers I and II).
fn codec_of(track: &mediaslice::Track, config: &[u8]) -> Option<String> {
    use mediaslice::codec::convert::{adts::audio_specific_config, avcc, hvcc};
    let mut record = vec![0u8; config.len() + 256];
    match track.codec {
        Codec::H264 if config.first() == Some(&1) => avc_codecs(config),
        Codec::H264 => {
            let n = avcc::write_avcc_from_annexb(config, &mut record).ok()?;
            avc_codecs(record.get(..n)?)
        }
        Codec::Hevc if config.first() == Some(&1) => hevc_codecs(b"hvc1", config),
        Codec::Hevc => {
            let n = hvcc::write_hvcc_from_annexb(config, true, &mut record).ok()?;
            hevc_codecs(b"hvc1", record.get(..n)?)
        }
        Codec::Aac => match mediaslice::codec::adts::AdtsHeader::parse(config) {
            Some(h) => aac_codecs(&audio_specific_config(&h).ok()?),
            None => aac_codecs(config),
        },
        Codec::Mp3 => Some("mp4a.40.34".into()),
        Codec::Mp2 => Some("mp4a.40.33".into()),
        Codec::Mp1 => Some("mp4a.40.32".into()),
        Codec::Ac3 => Some("ac-3".into()),
        Codec::Eac3 => Some("ec-3".into()),
        _ => None,
    }
}

/// The picture size of a video track: the container's, else (an MPEG-TS
/// input says none) the SPS's among Annex B parameter sets.
fn picture_size(track: &mediaslice::Track, config: &[u8]) -> Option<(u16, u16)> {
    use mediaslice::codec::{convert::to_length::AnnexBNalUnits, h264, hevc};
    let (w, h) = match (track.width, track.codec) {
        (0, Codec::H264) => AnnexBNalUnits::new(config)
            .filter(|n| n.first().is_some_and(|b| b & 0x1F == 7))
            .find_map(h264::Sps::parse)
            .map(|s| (s.width, s.height))?,
        (0, Codec::Hevc) => AnnexBNalUnits::new(config)
            .filter(|n| n.first().is_some_and(|b| (b >> 1) & 0x3F == 33))
            .find_map(hevc::Sps::parse)
            .map(|s| (s.width, s.height))?,
        _ => (track.width, track.height),
    };
    Some((u16::try_from(w).ok()?, u16::try_from(h).ok()?)).filter(|&(w, h)| w > 0 && h > 0)
}

/// Where the packet loop cuts, and the times that give `#EXTINF`.
struct Cutter {
    /// Output index of the track that times the segments: the first video
    /// track (the muxer's PCR track), else the first.
    timing: usize,
    video: bool,
    time_base: Rational,
    /// Least segment duration in 90 kHz.
    every: i64,
    /// 90 kHz decode time of the timing track's first packet in the
    /// current segment.
    start: Option<i64>,
    /// A segment began and its first timing packet is still to come.
    pending: bool,
    /// Per segment (by its index): that first time.
    starts: Vec<(usize, i64)>,
    /// End of the timing track's last packet (its time plus duration).
    end: i64,
    /// Whether the first segment starts with a keyframe too.
    independent: bool,
}

impl Cutter {
    /// Writes `p`, with a cut before it when it is due (see the module).
    fn packet(&mut self, muxer: &mut Muxer<Files<SegmentFiles>>, p: &Packet<'_>) -> mediaslice::Result<()> {
        let timing = p.track == self.timing;
        // No time (a raw stream): the previous packet's end, as the muxer.
        let t = p
            .dts
            .or(p.pts)
            .map_or(self.end, |v| rescale_q(v, self.time_base, CLOCK));
        if let (true, Some(s)) = (timing, self.start) {
            if (p.flags.keyframe || !self.video) && t - s >= self.every {
                muxer.sink().split.cut.set(true);
            }
        }
        let before = muxer.sink().split.segments.len();
        muxer.write_packet(p)?;
        let sink = &muxer.sink().split;
        self.pending |= sink.segments.len() != before;
        if self.video {
            // A video cut belongs to this keyframe's PAT alone.
            sink.cut.set(false);
        }
        if timing {
            if self.start.is_none() {
                self.independent = p.flags.keyframe || !self.video;
                self.pending = true;
            }
            if self.pending {
                self.starts.push((sink.segments.len().saturating_sub(1), t));
                self.start = Some(t);
                self.pending = false;
            }
            let d = p.duration.and_then(|d| i64::try_from(d).ok()).unwrap_or(0);
            self.end = self.end.max(t + rescale_q(d, self.time_base, CLOCK));
        }
        Ok(())
    }

    /// Each segment's duration in 90 kHz: from its first timing packet to
    /// the next segment's (the last: to the end); 0 for a segment with no
    /// packet of the timing track.
    fn durations(&self, segments: &mut [Segment]) {
        for (k, &(i, t)) in self.starts.iter().enumerate() {
            let next = self.starts.get(k + 1).map_or(self.end, |n| n.1);
            if let Some(s) = segments.get_mut(i) {
                s.ticks = u64::try_from(next - t).unwrap_or(0);
                s.seconds = s.ticks as f64 / 90_000.0;
            }
        }
    }
}

/// `package IN OUTDIR --hls --ts` (see the module).
///
/// Errors: as `remux IN OUT.ts` (a codec TS does not carry is refused
/// before anything is written); a track with no `CODECS` string here
/// (MPEG-1/2 and MPEG-4 Part 2 video) is `Output` with `Unsupported`,
/// also before anything is written.
pub fn package_ts(input: &Path, outdir: &Path, segment_ms: u32) -> Result<PackageReport, RemuxError> {
    let ext = input.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    crate::MmapSource::open(input).map_err(RemuxError::Io)?;
    let open = || open_mapped(input, ext.as_deref());
    ts_passes(&open, &open, outdir, segment_ms)
}

/// [`package_ts`] over any source, the writing pass opened by `main`.
fn ts_passes<S: Source>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    main: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    outdir: &Path,
    segment_ms: u32,
) -> Result<PackageReport, RemuxError> {
    let tracks = prepare_tracks(open).map_err(RemuxError::Input)?;
    let mut muxer = Muxer::new(Files::new(SegmentFiles::new(outdir)), MuxFormat::Ts).map_err(RemuxError::Output)?;
    let map = declare_tracks(&mut muxer, &tracks, &mut RemuxReport::default())?;
    let written: Vec<_> = tracks.iter().filter(|t| t.skip.is_none()).collect();
    let codecs = written
        .iter()
        .map(|t| codec_of(&t.track, &t.config))
        .collect::<Option<Vec<_>>>()
        .ok_or(RemuxError::Output(mediaslice::Error::unsupported(0, &NO_CODECS)))?;
    let timing = written.iter().position(|t| t.track.kind == TrackKind::Video);
    let first = written.get(timing.unwrap_or(0)).map(|t| &t.track);
    let resolution = timing
        .and_then(|i| written.get(i))
        .and_then(|t| picture_size(&t.track, &t.config));
    let mut cutter = Cutter {
        timing: timing.unwrap_or(0),
        video: timing.is_some(),
        time_base: first.map_or(CLOCK, |t| t.time_base),
        every: i64::from(segment_ms) * 90,
        start: None,
        pending: false,
        starts: Vec::new(),
        end: 0,
        independent: true,
    };
    std::fs::create_dir_all(outdir).map_err(RemuxError::Io)?;
    muxer.write_header().map_err(RemuxError::Output)?;
    let mut demuxer = main().map_err(RemuxError::Input)?;
    let start = start_us(&tracks);
    let stopped = for_each_packet(&mut demuxer, &map, start, None, &mut |p| cutter.packet(&mut muxer, p));
    let stopped = match stopped {
        Ok(s) => s,
        Err(e) => {
            return Err(match muxer.sink().error.as_ref() {
                Some(io) => RemuxError::Io(std::io::Error::new(io.kind(), io.to_string())),
                None => RemuxError::Output(e),
            })
        }
    };
    let packets = muxer.packets();
    let mut sink = muxer.finish().map_err(RemuxError::Output)?.split;
    sink.end_segment().map_err(RemuxError::Io)?;
    let mut segments = std::mem::take(&mut sink.segments);
    cutter.durations(&mut segments);
    let codecs = codecs.join(",");
    write_playlists(outdir, &segments, &codecs, resolution, Form::ts(cutter.independent))?;
    Ok(PackageReport {
        segments,
        codecs,
        packets,
        timescale: 90_000,
        start: cutter.starts.first().map_or(0, |s| u64::try_from(s.1).unwrap_or(0)),
        stopped,
        ..PackageReport::default()
    })
}
