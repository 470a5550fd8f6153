//! `mediaslice package IN OUTDIR --hls [--segment 6s]`: HLS with CMAF
//! segments. The input is remuxed to fragmented MP4 (the core muxer, in its
//! stream form, through [`crate::remux::remux_into`]) into a `SplitSink`
//! that cuts the byte stream at its top-level boxes: `ftyp` + `moov` go to
//! `init.mp4`, each `moof` + `mdat` to `seg_NNNNN.m4s`. Each segment's
//! duration is read from its `moof` as it passes (the `trun` sample
//! durations of the first video track, or the first track), so `#EXTINF`
//! is exact. Then `media.m3u8` (RFC 8216 §4.3: `#EXT-X-VERSION:7`,
//! `#EXT-X-TARGETDURATION`, `#EXT-X-MAP`, `#EXT-X-INDEPENDENT-SEGMENTS`)
//! and `master.m3u8` (`#EXT-X-STREAM-INF` with `BANDWIDTH`, `CODECS` from
//! the init segment's `avcC` and `esds`, `RESOLUTION`); with `--dash`,
//! `manifest.mpd` over the same segments ([`crate::dash`]). The HLS
//! playlists are always written (they cost a few hundred bytes). Each
//! segment file is written under a temporary name (`.part`) and renamed
//! once complete. [`package_live`] does the same while the input is still
//! arriving (`--live`, IN `-`), updating the playlist per segment;
//! [`package_ts`] writes MPEG-TS segments instead (`--ts`).

use crate::input::{with_input, InputRead, InputSource};
use crate::remux::{remux_passes, RemuxError, RemuxFormat, RemuxOptions};
use mediaslice::{Demuxer, Sink, SinkStats};
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

mod cmaf_split;
mod init_box;
mod live;
mod live_dash;
mod seg_log;
mod ts;
use init_box::{
    aac_codecs, avc_codecs, be32, child, children, codec_string, hevc_codecs, resolution, tfdt, timing_track,
    track_scales, tracks, trun_ticks,
};
pub use live::package_live;
pub use seg_log::SegmentLog;
pub use ts::{package_ts, package_ts_live};

/// One media segment written.
#[derive(Debug, Clone)]
pub struct Segment {
    /// File name in OUTDIR.
    pub name: String,
    /// Bytes.
    pub bytes: u64,
    /// Duration in seconds, from its `moof`.
    pub seconds: f64,
    /// The same duration in ticks of [`PackageReport::timescale`].
    pub ticks: u64,
}

/// What `package` wrote.
#[derive(Debug, Default)]
pub struct PackageReport {
    /// The media segments (their records in a temporary file, read back
    /// with [`SegmentLog::each`] or [`SegmentLog::to_vec`]).
    pub segments: SegmentLog,
    /// The `CODECS` attribute of the variant.
    pub codecs: String,
    /// Packets written.
    pub packets: u64,
    /// Ticks per second of the track that times the segments.
    pub timescale: u32,
    /// That track's decode time at the first segment (its `tfdt`).
    pub start: u64,
    /// Live mode: the media sequence number of the first segment listed
    /// (segments before it left the window); 0 otherwise.
    pub media_sequence: u64,
    /// Live mode: the input error that ended the input early (the
    /// segments before it are written), if any.
    pub stopped: Option<mediaslice::Error>,
}

/// A stream sink that writes an fMP4 byte stream as HLS files: the init
/// segment, then one file per `moof` + `mdat`.
struct SplitSink {
    dir: PathBuf,
    head: [u8; 8],
    head_len: usize,
    /// Bytes left of the current top-level box, and its type.
    left: u64,
    kind: [u8; 4],
    file: Option<File>,
    /// Segments started, for the next one's name.
    started: u64,
    init: Vec<u8>,
    moof: Vec<u8>,
    /// Time scale of each track (by track ID - 1) and the track that
    /// times the segments.
    scales: Vec<u32>,
    timing_track: u32,
    first_decode: Option<u64>,
    /// The segment being written.
    open: Option<Segment>,
    /// The segments written (VOD).
    segments: SegmentLog,
    /// Live mode: each segment goes to the playlist as soon as it is
    /// complete (see [`live`]).
    live: Option<live::LiveHls>,
}

/// The error for a track whose codec has no `CODECS` string here.
const NO_CODECS: &str = "package: no CODECS string for this codec (H.264, HEVC, AAC, MP3, Opus, FLAC, AC-3, E-AC-3)";

fn io_err(e: std::io::Error) -> mediaslice::Error {
    if e.kind() == std::io::ErrorKind::Unsupported {
        // Live mode checks the codecs when the init segment is out.
        return mediaslice::Error::unsupported(0, &NO_CODECS);
    }
    mediaslice::Error::new(
        mediaslice::ErrorKind::Io(embedded_io::ErrorKind::Other),
        0,
        &"package: writing a segment file failed",
    )
}

impl SplitSink {
    fn take(&mut self, data: &[u8]) -> std::io::Result<()> {
        let mut data = data;
        while !data.is_empty() {
            if self.left == 0 {
                let n = (8 - self.head_len).min(data.len());
                self.head[self.head_len..self.head_len + n].copy_from_slice(&data[..n]);
                self.head_len += n;
                data = &data[n..];
                if self.head_len < 8 {
                    return Ok(());
                }
                self.head_len = 0;
                let size = u64::from(u32::from_be_bytes([
                    self.head[0],
                    self.head[1],
                    self.head[2],
                    self.head[3],
                ]));
                self.kind = [self.head[4], self.head[5], self.head[6], self.head[7]];
                self.left = size.saturating_sub(8);
                let head = self.head;
                match &self.kind {
                    b"ftyp" | b"moov" => self.init.extend_from_slice(&head),
                    b"moof" => {
                        self.start_segment()?;
                        self.moof.clear();
                        self.moof.extend_from_slice(&head);
                        self.write_file(&head)?;
                    }
                    _ => self.write_file(&head)?,
                }
                if self.left == 0 {
                    self.box_done()?;
                }
                continue;
            }
            let n = usize::try_from(self.left).unwrap_or(usize::MAX).min(data.len());
            let (part, rest) = data.split_at(n);
            match &self.kind {
                b"ftyp" | b"moov" => self.init.extend_from_slice(part),
                b"moof" => {
                    self.moof.extend_from_slice(part);
                    self.write_file(part)?;
                }
                _ => self.write_file(part)?,
            }
            self.left -= n as u64;
            data = rest;
            if self.left == 0 {
                self.box_done()?;
            }
        }
        Ok(())
    }

    fn write_file(&mut self, b: &[u8]) -> std::io::Result<()> {
        if let Some(f) = self.file.as_mut() {
            f.write_all(b)?;
        }
        if let Some(s) = self.open.as_mut() {
            s.bytes += b.len() as u64;
        }
        Ok(())
    }

    fn start_segment(&mut self) -> std::io::Result<()> {
        self.end_segment()?;
        if self.started == 0 {
            // A codec with no `CODECS` string fails here, before any file
            // is written, not after the whole pass has written every
            // segment (measured: 19 s of segments left on a 4.5 GiB AVI).
            codecs_of(&self.init).map_err(|_| std::io::Error::new(std::io::ErrorKind::Unsupported, NO_CODECS))?;
            std::fs::write(self.dir.join("init.mp4"), &self.init)?;
            self.scales = track_scales(&self.init);
            self.timing_track = timing_track(&self.init);
            if let Some(l) = self.live.as_mut() {
                l.start(&self.init)?;
            }
        }
        self.started += 1;
        let name = Form::CMAF.segment_name(self.started);
        // Written under a temporary name, renamed once complete.
        self.file = Some(File::create(self.dir.join(part_name(&name)))?);
        self.open = Some(Segment {
            name,
            bytes: 0,
            seconds: 0.0,
            ticks: 0,
        });
        Ok(())
    }

    /// Ticks per second of the track that times the segments.
    fn timescale(&self) -> u32 {
        self.scales
            .get(self.timing_track.saturating_sub(1) as usize)
            .copied()
            .unwrap_or(1)
            .max(1)
    }

    /// Closes the open segment file and renames it to its name; in live
    /// mode, hands the segment to the playlist.
    fn end_segment(&mut self) -> std::io::Result<()> {
        let Some(f) = self.file.take() else { return Ok(()) };
        drop(f);
        let Some(seg) = self.open.take() else { return Ok(()) };
        std::fs::rename(self.dir.join(part_name(&seg.name)), self.dir.join(&seg.name))?;
        match self.live.as_mut() {
            Some(l) => l.push(seg),
            None => self.segments.push(self.started, &seg),
        }
    }

    fn box_done(&mut self) -> std::io::Result<()> {
        if &self.kind == b"mdat" {
            return self.end_segment();
        }
        if &self.kind == b"moof" {
            let ticks = trun_ticks(&self.moof, self.timing_track);
            let scale = self.timescale();
            if let Some(s) = self.open.as_mut() {
                s.seconds = ticks as f64 / f64::from(scale);
                s.ticks = ticks;
            }
            if self.first_decode.is_none() {
                self.first_decode = Some(tfdt(&self.moof, self.timing_track));
            }
        }
        Ok(())
    }
}

/// The temporary name of a segment file while it is written.
fn part_name(name: &str) -> String {
    format!("{name}.part")
}

impl FileSplit for SplitSink {
    fn take(&mut self, data: &[u8]) -> std::io::Result<()> {
        SplitSink::take(self, data)
    }
    fn flush_file(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), |f| f.flush())
    }
}

/// What cuts a muxer's byte stream into files: [`SplitSink`] (CMAF), the
/// TS segmenter ([`ts`]).
trait FileSplit {
    /// The next bytes of the stream.
    fn take(&mut self, data: &[u8]) -> std::io::Result<()>;
    /// Flushes the file being written.
    fn flush_file(&mut self) -> std::io::Result<()>;
}

/// A stream sink (it cannot patch) over a [`FileSplit`]: counts the bytes
/// and keeps the first I/O error, whose message the muxer's error cannot
/// carry.
struct Files<T> {
    split: T,
    pos: u64,
    stats: SinkStats,
    error: Option<std::io::Error>,
}

impl<T> Files<T> {
    fn new(split: T) -> Self {
        Files {
            split,
            pos: 0,
            stats: SinkStats::default(),
            error: None,
        }
    }
}

impl<T: FileSplit> Sink for Files<T> {
    fn position(&self) -> u64 {
        self.pos
    }
    fn write_all(&mut self, data: &[u8]) -> mediaslice::Result<()> {
        if let Err(e) = self.split.take(data) {
            let err = io_err(std::io::Error::new(e.kind(), e.to_string()));
            self.error = Some(e);
            return Err(err);
        }
        self.pos += data.len() as u64;
        self.stats.bytes_written += data.len() as u64;
        self.stats.writes += 1;
        Ok(())
    }
    fn can_patch(&self) -> bool {
        false
    }
    fn patch_at(&mut self, pos: u64, _data: &[u8]) -> mediaslice::Result<()> {
        Err(mediaslice::sink::cannot_patch(pos))
    }
    fn flush(&mut self) -> mediaslice::Result<()> {
        self.split.flush_file().map_err(io_err)
    }
    fn stats(&self) -> SinkStats {
        self.stats
    }
}

/// `mediaslice package IN OUTDIR --hls --segment S`: `init.mp4`, the
/// segments and the playlists (see the module); [`package`] with HLS only.
///
/// Errors: as `remux`; a codec with no `CODECS` string here (AV1, VP9)
/// is `RemuxError::Output` with `Unsupported`.
pub fn package_hls(input: &Path, outdir: &Path, segment_ms: u32) -> Result<PackageReport, RemuxError> {
    package(input, outdir, segment_ms, true, false, InputRead::default())
}

/// One fragmented remux cut into files: what [`split`] wrote.
struct Split {
    init: Vec<u8>,
    segments: SegmentLog,
    timescale: u32,
    start: u64,
    packets: u64,
    /// The input error that ended the writing pass early, if any.
    stopped: Option<mediaslice::Error>,
}

/// Remuxes `input` (all its streams, or only `streams`) to fragmented MP4
/// cut into `dir`: `init.mp4`, then `seg_NNNNN.m4s` per fragment.
fn split<S: InputSource>(
    input: &Path,
    dir: &Path,
    segment_ms: u32,
    streams: Option<Vec<usize>>,
) -> Result<Split, RemuxError> {
    let ext = input.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    let open = || crate::remux::open_input::<S>(input, ext.as_deref());
    S::open_path(input).map_err(RemuxError::Io)?;
    split_passes(&open, &open, dir, segment_ms, streams, None).map(|(sp, _)| sp)
}

/// [`split`] over any source, the writing pass opened by `main` (see
/// [`crate::remux::remux_passes`]); in live mode the playlist is given
/// back, its input ended.
fn split_passes<S: mediaslice::Source>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    main: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    dir: &Path,
    segment_ms: u32,
    streams: Option<Vec<usize>>,
    live: Option<live::LiveHls>,
) -> Result<(Split, Option<live::LiveHls>), RemuxError> {
    std::fs::create_dir_all(dir).map_err(RemuxError::Io)?;
    let opts = RemuxOptions {
        format: Some(RemuxFormat::Fmp4),
        fragment_ms: Some(segment_ms),
        // One stream per DASH set: each keeps its place on the input's
        // common timeline, so the sets stay in sync.
        start_of_all_streams: streams.is_some(),
        streams,
        ..RemuxOptions::default()
    };
    let sink = Files::new(SplitSink {
        dir: dir.to_path_buf(),
        head: [0; 8],
        head_len: 0,
        left: 0,
        kind: [0; 4],
        file: None,
        started: 0,
        init: Vec::new(),
        moof: Vec::new(),
        scales: Vec::new(),
        timing_track: 1,
        first_decode: None,
        open: None,
        segments: SegmentLog::spilled(dir, Form::CMAF.ext),
        live,
    });
    let (mut sink, report) = remux_passes(open, main, &opts, sink)?;
    if let Some(e) = sink.error.take() {
        return Err(RemuxError::Io(e));
    }
    sink.flush().map_err(RemuxError::Output)?;
    let mut sink = sink.split;
    sink.end_segment().map_err(RemuxError::Io)?;
    if sink.started == 0 {
        std::fs::write(dir.join("init.mp4"), &sink.init).map_err(RemuxError::Io)?;
    }
    let timescale = sink.timescale();
    Ok((
        Split {
            timescale,
            start: sink.first_decode.unwrap_or(0),
            init: sink.init,
            segments: sink.segments,
            packets: report.packets,
            stopped: report.stopped,
        },
        sink.live,
    ))
}

/// The `CODECS` strings of an init segment's tracks.
fn codecs_of(init: &[u8]) -> Result<Vec<String>, RemuxError> {
    tracks(init)
        .iter()
        .map(|(_, kind, entry)| {
            codec_string(kind, entry).ok_or(RemuxError::Output(mediaslice::Error::unsupported(0, &NO_CODECS)))
        })
        .collect()
}

/// Packages `input` into `outdir`. With `hls`: `init.mp4` and the
/// segments of all streams together, `media.m3u8` and `master.m3u8`. With
/// `dash`: each audio and video stream fragmented on its own under
/// `dash/<stream>/` (DASH players take one media type per Adaptation Set)
/// and `manifest.mpd` over them ([`crate::dash`]). The input is read as
/// `read` says (`--source`), every pass.
pub fn package(
    input: &Path,
    outdir: &Path,
    segment_ms: u32,
    hls: bool,
    dash: bool,
    read: InputRead,
) -> Result<PackageReport, RemuxError> {
    with_input!(read, S => package_from::<S>(input, outdir, segment_ms, hls, dash))
}

/// [`package`] through the source `S`.
fn package_from<S: InputSource>(
    input: &Path,
    outdir: &Path,
    segment_ms: u32,
    hls: bool,
    dash: bool,
) -> Result<PackageReport, RemuxError> {
    std::fs::create_dir_all(outdir).map_err(RemuxError::Io)?;
    let mut out = PackageReport {
        segments: SegmentLog::spilled(outdir, Form::CMAF.ext),
        ..PackageReport::default()
    };
    if hls {
        let sp = split::<S>(input, outdir, segment_ms, None)?;
        let codecs = codecs_of(&sp.init)?;
        write_hls(outdir, &sp, &codecs)?;
        out = PackageReport {
            codecs: codecs.join(","),
            packets: sp.packets,
            timescale: sp.timescale,
            start: sp.start,
            segments: sp.segments,
            ..PackageReport::default()
        };
    }
    if dash {
        let streams = media_streams::<S>(input)?;
        let mut sets = Vec::new();
        for i in streams {
            let rel = format!("dash/{i}");
            let sp = split::<S>(input, &outdir.join(&rel), segment_ms, Some(vec![i]))?;
            let codecs = codecs_of(&sp.init)?.join(",");
            let video = tracks(&sp.init).iter().any(|t| &t.0 == b"vide");
            let (peak, _) = sp.segments.bit_rates();
            if !hls {
                out.packets += sp.packets;
                out.segments.extend_from(&sp.segments).map_err(RemuxError::Io)?;
                out.codecs = if out.codecs.is_empty() {
                    codecs.clone()
                } else {
                    format!("{},{codecs}", out.codecs)
                };
            }
            sets.push(crate::dash::Representation {
                dir: rel,
                codecs,
                video,
                resolution: if video { resolution(&sp.init) } else { None },
                bandwidth: peak,
                timescale: sp.timescale,
                start: sp.start,
                offset: sp.start,
                first_number: 1,
                segments: sp.segments,
            });
        }
        // One Period start for every set: the earliest track's first
        // decode time, in each set's time scale (ISO/IEC 23009-1 §5.3.9.2:
        // a sample's Period time is its media time less the offset), so a
        // track that starts later in the input starts later in the Period
        // and the tracks keep their relative timing.
        let secs = |r: &crate::dash::Representation| r.start as f64 / f64::from(r.timescale.max(1));
        let zero = sets.iter().map(secs).fold(f64::INFINITY, f64::min);
        if zero.is_finite() {
            for r in &mut sets {
                r.offset = ((zero * f64::from(r.timescale)).round() as u64).min(r.start);
            }
        }
        live::write_atomic_with(&outdir.join("manifest.mpd"), |w| crate::dash::write_mpd(w, &sets, None))
            .map_err(RemuxError::Io)?;
    }
    Ok(out)
}

/// The input's audio and video streams, by index.
fn media_streams<S: InputSource>(input: &Path) -> Result<Vec<usize>, RemuxError> {
    let ext = input.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    let src = S::open_path(input).map_err(RemuxError::Io)?;
    let d = src.demuxer(ext.as_deref()).map_err(RemuxError::Input)?;
    Ok(d.tracks()
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            matches!(t.kind, mediaslice::TrackKind::Video | mediaslice::TrackKind::Audio) && !t.attached_picture
        })
        .map(|(i, _)| i)
        .collect())
}

/// `media.m3u8` and `master.m3u8` over the segments of `sp`.
fn write_hls(outdir: &Path, sp: &Split, codecs: &[String]) -> Result<(), RemuxError> {
    write_playlists(
        outdir,
        &sp.segments,
        &codecs.join(","),
        resolution(&sp.init),
        Form::CMAF,
    )
}

/// `media.m3u8` (VOD) and `master.m3u8` over `segments`, each written
/// under a temporary name and renamed.
fn write_playlists(
    outdir: &Path,
    segments: &SegmentLog,
    codecs: &str,
    resolution: Option<(u16, u16)>,
    form: Form,
) -> Result<(), RemuxError> {
    live::write_atomic_with(&outdir.join("media.m3u8"), |w| {
        logged_playlist(w, segments, segments.target(), "VOD", true, form)
    })
    .map_err(RemuxError::Io)?;
    let (peak, average) = segments.bit_rates();
    let master = master_playlist(peak, average, codecs, resolution, form);
    live::write_atomic(&outdir.join("master.m3u8"), master).map_err(RemuxError::Io)
}

/// What a playlist's segments are: CMAF ones with their init segment
/// (`#EXT-X-MAP`, version 7), or MPEG-TS ones, whole in themselves
/// (version 3, RFC 8216 §7: decimal `#EXTINF`); whether each starts
/// with a keyframe (`#EXT-X-INDEPENDENT-SEGMENTS`, §4.3.5.1); and the
/// extension of the segment files.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Form {
    map: Option<&'static str>,
    independent: bool,
    ext: &'static str,
}

impl Form {
    /// CMAF segments: the fragmented muxer starts each at a keyframe.
    pub(crate) const CMAF: Form = Form {
        map: Some("init.mp4"),
        independent: true,
        ext: "m4s",
    };

    /// MPEG-TS segments.
    pub(crate) const fn ts(independent: bool) -> Form {
        Form {
            map: None,
            independent,
            ext: "ts",
        }
    }

    /// The file name of segment `number` (the first is 1):
    /// `seg_00001.m4s`, `seg_00001.ts`.
    pub(crate) fn segment_name(self, number: u64) -> String {
        format!("seg_{number:05}.{}", self.ext)
    }

    fn head(self) -> String {
        let version = if self.map.is_some() { 7 } else { 3 };
        let mut s = format!("#EXTM3U\n#EXT-X-VERSION:{version}\n");
        if self.independent {
            s.push_str("#EXT-X-INDEPENDENT-SEGMENTS\n");
        }
        s
    }
}

/// A sliding window's media playlist (RFC 8216 §4.3, no playlist type) of
/// `form`, `#EXT-X-MEDIA-SEQUENCE` of the first segment listed,
/// `#EXT-X-ENDLIST` when `end`; the `VOD` and `EVENT` playlists, which list
/// every segment, are [`logged_playlist`]s.
fn media_playlist<'a>(
    segments: impl Iterator<Item = &'a Segment>,
    target: u64,
    sequence: u64,
    end: bool,
    form: Form,
) -> String {
    let mut media = playlist_head(target, sequence, None, form);
    for s in segments {
        playlist_line(&mut media, s);
    }
    if end {
        media.push_str(ENDLIST);
    }
    media
}

/// The media playlist of type `kind` (RFC 8216 §4.3.3.5) of every segment
/// in `log`, written line by line as the records are read back (its text
/// is never whole in memory); `#EXT-X-ENDLIST` when `end`.
///
/// Errors: reading the log, writing `w`.
fn logged_playlist(
    w: &mut dyn std::io::Write,
    log: &SegmentLog,
    target: u64,
    kind: &str,
    end: bool,
    form: Form,
) -> std::io::Result<()> {
    w.write_all(playlist_head(target, 0, Some(kind), form).as_bytes())?;
    let mut line = String::new();
    let mut result = Ok(());
    log.each(|s| {
        if result.is_ok() {
            line.clear();
            playlist_line(&mut line, s);
            result = w.write_all(line.as_bytes());
        }
    })?;
    result?;
    if end {
        w.write_all(ENDLIST.as_bytes())?;
    }
    Ok(())
}

/// The end of a finished playlist (RFC 8216 §4.3.3.4).
const ENDLIST: &str = "#EXT-X-ENDLIST\n";

/// A segment's lines in a media playlist (RFC 8216 §4.3.2.1).
fn playlist_line(media: &mut String, s: &Segment) {
    let _ = writeln!(media, "#EXTINF:{:.6},\n{}", s.seconds, s.name);
}

/// A media playlist's tags before its segments (see [`media_playlist`]).
fn playlist_head(target: u64, sequence: u64, kind: Option<&str>, form: Form) -> String {
    let mut media = form.head();
    let _ = writeln!(media, "#EXT-X-TARGETDURATION:{target}");
    let _ = writeln!(media, "#EXT-X-MEDIA-SEQUENCE:{sequence}");
    if let Some(k) = kind {
        let _ = writeln!(media, "#EXT-X-PLAYLIST-TYPE:{k}");
    }
    if let Some(map) = form.map {
        let _ = writeln!(media, "#EXT-X-MAP:URI=\"{map}\"");
    }
    media
}

/// The multivariant playlist (RFC 8216 §4.3.4.2) of the one variant.
fn master_playlist(peak: u64, average: u64, codecs: &str, resolution: Option<(u16, u16)>, form: Form) -> String {
    let mut master = form.head();
    let _ = write!(
        master,
        "#EXT-X-STREAM-INF:BANDWIDTH={peak},AVERAGE-BANDWIDTH={average},CODECS=\"{codecs}\""
    );
    if let Some((w, h)) = resolution {
        let _ = write!(master, ",RESOLUTION={w}x{h}");
    }
    master.push_str("\nmedia.m3u8\n");
    master
}

/// The live options of the `package` command.
#[derive(Debug, Default)]
pub struct LiveArgs<'a> {
    /// `--live` / `--follow` (IN `-` implies it).
    pub live: bool,
    /// `--idle`: a growing file's end.
    pub idle: &'a str,
    /// `--window N`.
    pub window: Option<usize>,
}

/// The `package` command: prints its report on stderr; the exit code
/// (0, 1 for a failure, 64 for a usage error).
/// With `ts`, MPEG-TS segments ([`package_ts`], [`package_ts_live`])
/// rather than CMAF ones: HLS only (not with `--dash`). A finished file is
/// read as `read` says (`--source`); a live input through its own source.
#[allow(clippy::too_many_arguments)]
pub fn cmd_package(
    input: &Path,
    outdir: &Path,
    hls: bool,
    dash: bool,
    ts: bool,
    segment: &str,
    live: &LiveArgs<'_>,
    read: InputRead,
) -> u8 {
    if ts && dash {
        eprintln!(
            "mediaslice: package: --ts is for HLS alone; --dash takes CMAF segments (leave --ts out, or give --fmp4)"
        );
        return 64;
    }
    if !hls && !dash {
        eprintln!("mediaslice: package: give --hls, --dash or both");
        return 64;
    }
    let Some(ms) = parse_duration_ms(segment) else {
        eprintln!("mediaslice: --segment {segment}: not a duration (6s, 2.5s, 500ms)");
        return 64;
    };
    let stdin = input.as_os_str() == "-";
    let is_live = live.live || stdin;
    if !is_live && live.window.is_some() {
        eprintln!("mediaslice: --window is for --live (a finished file gets a VOD playlist of all its segments)");
        return 64;
    }
    let started = std::time::Instant::now();
    let result = if is_live {
        let Some(idle) = parse_duration_ms(if live.idle.is_empty() { "10s" } else { live.idle }) else {
            eprintln!("mediaslice: --idle {}: not a duration (10s, 500ms)", live.idle);
            return 64;
        };
        let opts = crate::live::LiveOptions {
            idle: std::time::Duration::from_millis(u64::from(idle)),
            ..crate::live::LiveOptions::default()
        };
        let source = if stdin {
            Ok(crate::live::LiveInput::stream(Box::new(std::io::stdin()), opts))
        } else {
            crate::live::LiveInput::follow(input, opts)
        };
        source.map_err(RemuxError::Io).and_then(|src| match ts {
            true => package_ts_live(&src, outdir, ms, live.window),
            false => package_live(&src, outdir, ms, live.window, dash),
        })
    } else if ts {
        package_ts(input, outdir, ms, read)
    } else {
        package(input, outdir, ms, hls, dash, read)
    };
    match result {
        Ok(r) => {
            eprintln!(
                "mediaslice: {} -> {}: {} packets, {} segments, CODECS \"{}\", {:.3} s",
                input.display(),
                outdir.join(if hls { "master.m3u8" } else { "manifest.mpd" }).display(),
                r.packets,
                r.media_sequence + r.segments.len() as u64,
                r.codecs,
                started.elapsed().as_secs_f64()
            );
            match r.stopped {
                Some(e) if e.kind() == mediaslice::ErrorKind::Truncated => {
                    eprintln!("mediaslice: note: {e}");
                    0
                }
                Some(e) => {
                    eprintln!("mediaslice: {}: the input stopped early: {e}", input.display());
                    1
                }
                None => 0,
            }
        }
        Err(e) => {
            eprintln!("mediaslice: {}: {e}", input.display());
            1
        }
    }
}

/// A duration such as `6s`, `6`, `2.5s` or `500ms`, in milliseconds.
pub fn parse_duration_ms(s: &str) -> Option<u32> {
    let (num, scale) = match s.strip_suffix("ms") {
        Some(n) => (n, 1.0),
        None => (s.strip_suffix('s').unwrap_or(s), 1000.0),
    };
    let v: f64 = num.trim().parse().ok()?;
    (v > 0.0 && v * scale < f64::from(u32::MAX)).then(|| (v * scale).round() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration_ms("6s"), Some(6000));
        assert_eq!(parse_duration_ms("6"), Some(6000));
        assert_eq!(parse_duration_ms("2.5s"), Some(2500));
        assert_eq!(parse_duration_ms("500ms"), Some(500));
        assert_eq!(parse_duration_ms("x"), None);
        assert_eq!(parse_duration_ms("-1s"), None);
    }
}
