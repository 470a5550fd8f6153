//! `packets` and `packets --summary`: every packet, as a table, JSON or
//! one CRC-32, with the tail (streams, format) that ffprobe's JSON has.

use super::*;

/// A percentage on stderr while packets are pulled, when stderr is a
/// terminal, stdout is not (the output goes to a file or a pipe) and the work
/// takes a while; nothing otherwise.
pub(super) struct Progress {
    size: u64,
    enabled: bool,
    shown: bool,
    n: u32,
    last: Instant,
}

impl Progress {
    const EVERY: Duration = Duration::from_millis(250);

    fn new(size: u64) -> Self {
        Progress {
            size,
            enabled: io::stderr().is_terminal() && !io::stdout().is_terminal() && size > 0,
            shown: false,
            n: 0,
            last: Instant::now(),
        }
    }

    /// Notes a packet at byte `pos`; looks at the clock every 256 packets.
    fn tick(&mut self, pos: Option<u64>) {
        if !self.enabled {
            return;
        }
        self.n = self.n.wrapping_add(1);
        if self.n % 256 != 0 || self.last.elapsed() < Self::EVERY {
            return;
        }
        self.last = Instant::now();
        if let Some(pos) = pos {
            let pct = pos.saturating_mul(100) / self.size;
            eprint!("\rmediaslice: {pct:>3}% ");
            self.shown = true;
        }
    }

    fn done(&mut self) {
        if self.shown {
            eprint!("\r\x1b[K");
            self.shown = false;
        }
    }
}

pub(super) fn facts<'a, S: Source>(d: &Demuxer<S>, filename: &'a str) -> FormatFacts<'a> {
    let info = d.info();
    FormatFacts {
        filename,
        kind: d.format(),
        nb_streams: d.tracks().len(),
        size: d.source().len(),
        duration_us: info.duration_us,
        start_us: info.start_us,
        bit_rate: info.bit_rate,
    }
}

pub(super) fn write_tail<S: Source, W: Write>(
    w: &mut W,
    d: &mut Demuxer<S>,
    tags: &TagSet,
    timing: &Timing,
    video: &[Option<VideoFacts>],
    filename: &str,
) -> io::Result<()> {
    let (streams, format) = ffprobe::probe::document(d, tags, timing, video, filename);
    w.write_all(b"  \"streams\": ")?;
    serde_json::to_writer_pretty(&mut *w, &streams)?;
    w.write_all(b",\n  \"format\": ")?;
    serde_json::to_writer_pretty(&mut *w, &format)?;
    Ok(())
}

pub(super) fn opt_i64(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

pub(super) fn opt_u64(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// The table's flags: ffprobe's two (`K` keyframe, `D` discard) and `T`
/// when the input ends inside the packet.
pub(super) fn table_flags(p: &mediaslice::Packet<'_>) -> String {
    let t = if p.flags.truncated { "T" } else { "_" };
    format!("{}{t}", ffprobe::flags(p))
}

/// `packets`: every packet, as a table or as ffprobe's JSON document. The
/// packets are written one by one as they are pulled; nothing proportional
/// to the file is held.
pub(super) fn cmd_packets<S: Source, W: Write>(d: &mut Demuxer<S>, w: &mut W, json: bool, filename: &str) -> Outcome {
    // Copied once so a packet (which borrows the demuxer) can be described.
    let tracks = d.tracks().to_vec();
    let tags = if json {
        ffprobe::gather::ffprobe_tags(d).0
    } else {
        TagSet::default()
    };
    if json {
        w.write_all(b"{\n  \"packets\": [")?;
    } else {
        writeln!(
            w,
            "{:>6} {:>12} {:>12} {:>10} {:>9} {:>12} {:5} crc32",
            "stream", "pts", "dts", "duration", "size", "pos", "flags"
        )?;
    }
    let mut stopped = None;
    let mut first = true;
    let mut timing = Timing::new(tracks.len());
    let mut progress = Progress::new(d.source().len());
    loop {
        let p = match d.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => {
                stopped = Some(e);
                break;
            }
        };
        progress.tick(p.pos);
        timing.observe(&p);
        let crc = crc32(p.data);
        if map_faulted() {
            // The bytes just hashed may be zeros standing for a lost part.
            let pos = p.pos;
            stopped = Some(map_lost(d, pos));
            break;
        }
        if json {
            w.write_all(if first { b"\n    " } else { b",\n    " })?;
            ffprobe::write_packet(w, &p, tracks.get(p.track), crc)?;
        } else {
            writeln!(
                w,
                "{:>6} {:>12} {:>12} {:>10} {:>9} {:>12} {:5} {:08x}",
                p.track,
                opt_i64(p.pts),
                opt_i64(p.dts),
                opt_u64(p.duration),
                p.data.len(),
                opt_u64(p.pos),
                table_flags(&p),
                crc
            )?;
        }
        first = false;
    }
    progress.done();
    if json {
        w.write_all(if first { b"],\n" } else { b"\n  ],\n" })?;
        let video = video_facts(d, &timing);
        write_tail(w, d, &tags, &timing, &video, filename)?;
        w.write_all(b"\n}\n")?;
    }
    Ok(stopped)
}

/// Whether a memory-mapped input has shrunk under its map during this run
/// (its lost pages then read as zeros; see `MmapSource`). Always false for
/// the other sources.
pub(super) fn map_faulted() -> bool {
    MmapSource::faults_absorbed() > 0
}

/// The error to stop with once `map_faulted()`: the source's own (every
/// call on it fails from then on), else a truncation at `pos`.
pub(super) fn map_lost<S: Source>(d: &mut Demuxer<S>, pos: Option<u64>) -> mediaslice::Error {
    match d.next_packet() {
        Err(e) => e,
        _ => mediaslice::Error::truncated(pos.unwrap_or(0), &"the file shrank while it was mapped"),
    }
}

/// `packets --summary`: count, bytes and the CRC-32 of all payloads in
/// delivery order. Payloads that the container splits (MPEG-TS PES across
/// TS packets) are hashed piece by piece where they lie
/// (`Demuxer::next_packet_pieces`), never joined.
pub(super) fn cmd_summary<S: Source, W: Write>(d: &mut Demuxer<S>, w: &mut W) -> Outcome {
    let mut crc = Crc32::new();
    let (mut n, mut bytes) = (0u64, 0u64);
    let mut stopped = None;
    let mut progress = Progress::new(d.source().len());
    loop {
        let (pos, len, c, piece_err) = match d.next_packet_pieces() {
            Ok(Some(mut p)) => {
                progress.tick(p.packet.pos);
                let mut c = crc.clone();
                let err = loop {
                    match p.next_piece() {
                        Ok(Some(piece)) => c.update(piece),
                        Ok(None) => break None,
                        Err(e) => break Some(e),
                    }
                };
                (p.packet.pos, p.len(), c, err)
            }
            Ok(None) => break,
            Err(e) => {
                stopped = Some(e);
                break;
            }
        };
        if map_faulted() {
            stopped = Some(map_lost(d, pos));
            break;
        }
        if let Some(e) = piece_err {
            stopped = Some(e);
            break;
        }
        crc = c;
        n += 1;
        bytes += len as u64;
    }
    progress.done();
    writeln!(
        w,
        "{{\"packets\": {n}, \"bytes\": {bytes}, \"crc32\": \"{:08x}\"}}",
        crc.finalize()
    )?;
    Ok(stopped)
}
