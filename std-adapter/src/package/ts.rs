//! `package IN OUTDIR --hls --ts`: HLS with MPEG-TS segments (RFC 8216
//! §3.2). The input goes once through one TS muxer (the one `remux OUT.ts`
//! uses: PCR on the video PID, Annex B with in-band parameter sets, ADTS
//! for AAC), whose byte stream [`SegmentFiles`] writes to `seg_NNNNN.ts`,
//! moving to the next file at a PAT, or at the SDT the muxer writes right
//! before a PAT every 500 ms (so a segment cut there opens with the
//! service's name too). The packet loop asks for a cut before
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
//! end; a packet of unknown duration lasts the step since the previous
//! one, as in the MP4 muxer), the times the muxer stamps, so the
//! durations add up to the track's span in the output. `CODECS` comes
//! from the track
//! configurations (there is no init segment): `avcC`/`hvcC` records (built
//! from Annex B parameter sets when the input has those), the
//! AudioSpecificConfig (or the ADTS header's), and fixed strings.
//!
//! Files: each segment is written under `.part` and renamed once the next
//! one starts (or the input ends); a failure removes the open `.part`. The
//! payload is never held: 64 KiB of write buffer.
//!
//! Live ([`package_ts_live`]: a pipe, a growing file; [`crate::live`]): the
//! same muxer and cuts over the live input, opened as `package --live`
//! opens it. A segment's `#EXTINF` is known once the next segment's first
//! timing packet is written (at a video cut, the keyframe the cut is made
//! for), so each segment goes to the live playlist ([`super::live`]:
//! `EVENT` or a `--window`, `#EXT-X-MEDIA-SEQUENCE`, `#EXT-X-ENDLIST` at
//! the end) right then, renamed into place just before; the last one at
//! the end of the input. The segments and their durations are those of
//! the finished file.

use super::live::{with_live_input, LiveHls};
use super::{
    aac_codecs, avc_codecs, hevc_codecs, write_playlists, FileSplit, Files, Form, PackageReport, Segment, SegmentLog,
    NO_CODECS,
};
use crate::input::{with_input, InputRead, InputSource};
use crate::live::LiveInput;
use crate::remux::{declare_tracks, for_each_packet, open_input, prepare_tracks, start_us, RemuxError, RemuxReport};
use mediaslice::types::rescale_q;
use mediaslice::{Codec, Demuxer, MuxFormat, Muxer, Packet, Rational, Source, TrackKind};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
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
    /// Segments started.
    started: u64,
    /// The segment being written (its name and bytes so far).
    open: Option<Segment>,
    /// Segments closed and renamed, for the packet loop to time
    /// ([`Cutter`] takes them after each packet: at most one).
    closed: RefCell<VecDeque<Segment>>,
}

impl SegmentFiles {
    fn new(dir: &Path) -> Self {
        SegmentFiles {
            dir: dir.to_path_buf(),
            file: None,
            pos: 0,
            cut: Cell::new(false),
            started: 0,
            open: None,
            closed: RefCell::new(VecDeque::new()),
        }
    }

    /// Whether `data`, written at the start of a TS packet, begins a PAT
    /// packet (sync byte, PID 0; ISO/IEC 13818-1 §2.4.3.2) or an SDT
    /// packet (PID 0x11, ETSI EN 300 468 §5.1.3), which the muxer writes
    /// only right before a PAT. The muxer hands a packet's 4-byte header
    /// over in one piece.
    fn is_tables(&self, data: &[u8]) -> bool {
        self.pos % TS_PACKET == 0 && matches!(data, [0x47, b1, 0 | 0x11, ..] if b1 & 0x1F == 0)
    }

    fn take(&mut self, data: &[u8]) -> std::io::Result<()> {
        if self.file.is_none() || (self.cut.get() && self.is_tables(data)) {
            self.cut.set(false);
            self.end_segment()?;
            self.started += 1;
            let name = Form::ts(true).segment_name(self.started);
            let f = File::create(self.dir.join(super::part_name(&name)))?;
            self.file = Some(BufWriter::with_capacity(BUFFER, f));
            self.open = Some(Segment {
                name,
                bytes: 0,
                seconds: 0.0,
                ticks: 0,
            });
        }
        if let Some(f) = self.file.as_mut() {
            f.write_all(data)?;
        }
        if let Some(s) = self.open.as_mut() {
            s.bytes += data.len() as u64;
        }
        self.pos += data.len() as u64;
        Ok(())
    }

    /// Closes the open segment file, renames it to its name and queues
    /// its record for the packet loop.
    fn end_segment(&mut self) -> std::io::Result<()> {
        let Some(f) = self.file.take() else { return Ok(()) };
        // Not synced, as the CMAF segments are not: hundreds of fsyncs
        // would triple the run (docs/write-side.md).
        drop(f.into_inner().map_err(|e| e.into_error())?);
        let Some(seg) = self.open.take() else { return Ok(()) };
        std::fs::rename(self.dir.join(super::part_name(&seg.name)), self.dir.join(&seg.name))?;
        self.closed.get_mut().push_back(seg);
        Ok(())
    }
}

impl Drop for SegmentFiles {
    /// A segment still open is a failed run's: its `.part` goes.
    fn drop(&mut self) {
        if self.file.take().is_some() {
            if let Some(seg) = self.open.as_ref() {
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

/// Where the packet loop cuts, and the times that give `#EXTINF`; the
/// timed segments go to the VOD list or, live, to the playlist as soon as
/// their duration is known.
struct Cutter {
    /// Output index of the track that times the segments: the first video
    /// track (the muxer's PCR track), else the first.
    timing: usize,
    video: bool,
    time_base: Rational,
    /// Least segment duration in 90 kHz.
    every: i64,
    /// 90 kHz decode time of the timing track's first packet in the
    /// latest segment that has one (where the next cut counts from).
    start: Option<i64>,
    /// That time of the timing track's first packet of all.
    first: Option<i64>,
    /// That time in the segment being written, once it has one.
    open_start: Option<i64>,
    /// Closed segments with their first time, waiting for the next
    /// segment's first time (their end).
    closed: VecDeque<(Segment, Option<i64>)>,
    /// End of the timing track's last packet (its time plus duration).
    end: i64,
    /// The timing track's previous packet time and duration.
    prev: Option<i64>,
    step: i64,
    /// Whether the first segment starts with a keyframe too.
    independent: bool,
    /// The variant's `CODECS` and picture size.
    codecs: String,
    resolution: Option<(u16, u16)>,
    /// The timed segments (VOD), or the live playlist they go to.
    done: SegmentLog,
    live: Option<LiveHls>,
    /// The I/O error of the live playlist, whose message the packet
    /// loop's error cannot carry.
    error: Option<std::io::Error>,
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
        muxer.write_packet(p)?;
        let sink = &muxer.sink().split;
        if self.video {
            // A video cut belongs to this keyframe's PAT alone.
            sink.cut.set(false);
        }
        // A segment closed while `p` was written: the one that was open.
        for seg in sink.closed.borrow_mut().drain(..) {
            self.closed.push_back((seg, self.open_start.take()));
        }
        if timing {
            if self.first.is_none() {
                self.independent = p.flags.keyframe || !self.video;
                self.first = Some(t);
                if let Some(l) = self.live.as_mut() {
                    l.begin(self.codecs.clone(), self.resolution, Form::ts(self.independent));
                }
            }
            if self.open_start.is_none() {
                self.open_start = Some(t);
                self.start = Some(t);
                self.settle(t).map_err(|e| {
                    let err = super::io_err(std::io::Error::new(e.kind(), e.to_string()));
                    self.error = Some(e);
                    err
                })?;
            }
            // An unknown duration (Matroska blocks, MPEG-TS PES): the step
            // since the previous packet, else the previous step, as the MP4
            // muxer times a sample (so the last segment is not 0 s long).
            let d = match p.duration.and_then(|d| i64::try_from(d).ok()) {
                Some(d) if d > 0 => rescale_q(d, self.time_base, CLOCK),
                _ => self.prev.filter(|&q| t > q).map_or(self.step, |q| t - q),
            };
            self.prev = Some(t);
            self.step = d;
            self.end = self.end.max(t + d);
        }
        Ok(())
    }

    /// The closed segments are timed, `next` the first time after them:
    /// each one's duration in 90 kHz runs from its first timing packet to
    /// the next segment's (0 for a segment with no packet of the timing
    /// track); then they go to the list or the live playlist, in order.
    fn settle(&mut self, next: i64) -> std::io::Result<()> {
        let mut after = next;
        for (seg, start) in self.closed.iter_mut().rev() {
            if let Some(s) = *start {
                seg.ticks = u64::try_from(after - s).unwrap_or(0);
                seg.seconds = seg.ticks as f64 / 90_000.0;
                after = s;
            }
        }
        while let Some((seg, _)) = self.closed.pop_front() {
            match self.live.as_mut() {
                Some(l) => l.push(seg)?,
                None => self.done.push(self.done.len() as u64 + 1, &seg)?,
            }
        }
        Ok(())
    }

    /// The input has ended and the last segment is closed: it and any
    /// still waiting are timed, the last to the timing track's end.
    fn finish(&mut self, files: &mut SegmentFiles) -> std::io::Result<()> {
        for seg in files.closed.get_mut().drain(..) {
            self.closed.push_back((seg, self.open_start.take()));
        }
        self.settle(self.end)
    }
}

/// `package IN OUTDIR --hls --ts` (see the module).
///
/// Errors: as `remux IN OUT.ts` (a codec TS does not carry is refused
/// before anything is written); a track with no `CODECS` string here
/// (MPEG-1/2 and MPEG-4 Part 2 video) is `Output` with `Unsupported`,
/// also before anything is written.
/// The input is read as `read` says (`--source`), every pass.
pub fn package_ts(input: &Path, outdir: &Path, segment_ms: u32, read: InputRead) -> Result<PackageReport, RemuxError> {
    with_input!(read, S => package_ts_from::<S>(input, outdir, segment_ms))
}

/// [`package_ts`] through the source `S`.
fn package_ts_from<S: InputSource>(input: &Path, outdir: &Path, segment_ms: u32) -> Result<PackageReport, RemuxError> {
    let ext = input.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    S::open_path(input).map_err(RemuxError::Io)?;
    let open = || open_input::<S>(input, ext.as_deref());
    ts_passes(&open, &open, outdir, segment_ms, None)
}

/// `mediaslice package - OUTDIR --hls --ts [--window N]` (or a growing
/// file with `--live`): [`package_ts`] of an input that is still
/// arriving, the live playlist (as [`super::package_live`]'s, version 3
/// and no `#EXT-X-MAP`) rewritten after each segment (see the module). The report lists the segments
/// still in the playlist.
///
/// Errors: as [`package_ts`]; an input that is not MPEG-TS or
/// Matroska/WebM is refused (`Io` with `Unsupported`) before anything is
/// written.
pub fn package_ts_live(
    input: &LiveInput,
    outdir: &Path,
    segment_ms: u32,
    window: Option<usize>,
) -> Result<PackageReport, RemuxError> {
    with_live_input(input, |open, main| {
        let live = LiveHls::new(outdir, window, segment_ms);
        ts_passes(open, main, outdir, segment_ms, Some(live))
    })
}

/// [`package_ts`] over any source, the writing pass opened by `main`; with
/// `live`, each segment goes to that playlist as soon as it is timed.
fn ts_passes<S: Source>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    main: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    outdir: &Path,
    segment_ms: u32,
    live: Option<LiveHls>,
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
    let mut cutter = Cutter {
        timing: timing.unwrap_or(0),
        video: timing.is_some(),
        time_base: first.map_or(CLOCK, |t| t.time_base),
        every: i64::from(segment_ms) * 90,
        start: None,
        first: None,
        open_start: None,
        closed: VecDeque::new(),
        end: 0,
        prev: None,
        step: 0,
        independent: true,
        codecs: codecs.join(","),
        resolution: timing
            .and_then(|i| written.get(i))
            .and_then(|t| picture_size(&t.track, &t.config)),
        done: SegmentLog::spilled(outdir, Form::ts(true).ext),
        live,
        error: None,
    };
    if let Some(l) = cutter.live.as_mut() {
        // Begun again at the first timing packet, which says whether the
        // first segment is independent too.
        l.begin(cutter.codecs.clone(), cutter.resolution, Form::ts(true));
    }
    std::fs::create_dir_all(outdir).map_err(RemuxError::Io)?;
    muxer.write_header().map_err(RemuxError::Output)?;
    let mut demuxer = main().map_err(RemuxError::Input)?;
    let start = start_us(&tracks);
    let stopped = for_each_packet(&mut demuxer, &map, start, None, &mut |p| cutter.packet(&mut muxer, p));
    let stopped = match stopped {
        Ok(s) => s,
        Err(e) => {
            let io = cutter.error.take().or_else(|| {
                let io = muxer.sink().error.as_ref()?;
                Some(std::io::Error::new(io.kind(), io.to_string()))
            });
            return Err(io.map_or(RemuxError::Output(e), RemuxError::Io));
        }
    };
    let packets = muxer.packets();
    let mut sink = muxer.finish().map_err(RemuxError::Output)?.split;
    sink.end_segment().map_err(RemuxError::Io)?;
    cutter.finish(&mut sink).map_err(RemuxError::Io)?;
    let report = PackageReport {
        packets,
        timescale: 90_000,
        start: cutter.first.map_or(0, |t| u64::try_from(t).unwrap_or(0)),
        stopped,
        ..PackageReport::default()
    };
    if let Some(live) = cutter.live.take() {
        return live.finish(report).map_err(RemuxError::Io);
    }
    let form = Form::ts(cutter.independent);
    write_playlists(outdir, &cutter.done, &cutter.codecs, cutter.resolution, form)?;
    Ok(PackageReport {
        segments: cutter.done,
        codecs: cutter.codecs,
        ..report
    })
}
