//! The Matroska muxer, round trip: every corpus file (and every sample of
//! `../shared/samples` when present) whose tracks Matroska can carry is
//! demuxed, written through `Muxer` (`MuxFormat::Matroska`) into a
//! `SliceSink`, and the output demuxed again with our own demuxer. Every
//! packet must come back in the same order with the same payload CRC (of
//! the payload as Matroska stores it: length-prefixed for Annex B input,
//! raw for ADTS), the same presentation time in milliseconds (the input's
//! rescaled with `rescale_q`, as the muxer does) and, for video, the same
//! keyframe flag. Also: a slice, a seeking writer and a stream give the
//! same packets, and the first two the same bytes.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::mux::VecFile;
use common::*;
use mediaslice::codec::convert::adts::adts_to_raw;
use mediaslice::codec::convert::to_length::{write_length_prefixed, AnnexBNalUnits, LengthPrefixOptions};
use mediaslice::crc::crc32;
use mediaslice::types::rescale_q;
use mediaslice::{
    Codec, Demuxer, ErrorKind, MuxFormat, Muxer, Rational, SeekWriterSink, Sink, SliceSink, SliceSource, Track,
    TrackKind, TrackSpec, WriterSink,
};

/// How a track's packets are reframed by the muxer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    AsIs,
    AnnexB,
    Adts,
    /// AV1: leading Temporal Delimiter OBUs (`12 00`) dropped.
    Av1,
}

/// Tracks and the configurations to give them, completed as
/// `mediaslice_std::remux` does (parameter sets or ADTS header from the
/// first packet, Xiph-laced Vorbis headers).
fn specs(bytes: &[u8], ext: Option<&str>) -> Option<Vec<(Track, Vec<u8>, Frame)>> {
    let mut scratch = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut scratch), ext).ok()?;
    let mut out = Vec::new();
    for i in 0..d.tracks().len() {
        let t = d.tracks()[i].clone();
        let mut c = d.codec_config(i).ok()?.to_vec();
        if matches!(t.codec, Codec::Vorbis | Codec::Theora) && c.first() != Some(&2) {
            let h: Vec<Vec<u8>> = (0..3)
                .filter_map(|j| d.header_packet(i, j).ok().flatten().map(<[u8]>::to_vec))
                .collect();
            if h.len() == 3 {
                c = vec![2];
                for p in &h[..2] {
                    c.extend(std::iter::repeat_n(255u8, p.len() / 255));
                    c.push((p.len() % 255) as u8);
                }
                h.iter().for_each(|p| c.extend_from_slice(p));
            }
        }
        let frame = match t.codec {
            Codec::H264 | Codec::Hevc if c.first() != Some(&1) => Frame::AnnexB,
            Codec::Aac if c.is_empty() => Frame::Adts,
            Codec::Av1 => Frame::Av1,
            _ => Frame::AsIs,
        };
        out.push((t, c, frame));
    }
    while let Ok(Some(p)) = d.next_packet() {
        let (t, c, frame) = &mut out[p.track];
        if c.is_empty() || (*frame == Frame::AnnexB && c.first() != Some(&0)) {
            *c = match frame {
                Frame::Adts => p.data.get(..7)?.to_vec(),
                // The whole first Temporal Unit: the muxer finds its
                // Sequence Header OBU.
                Frame::Av1 => p.data.to_vec(),
                Frame::AnnexB => {
                    let mut v = Vec::new();
                    for nal in AnnexBNalUnits::new(p.data) {
                        let ps = match t.codec {
                            Codec::H264 => matches!(nal.first().map(|h| h & 0x1F), Some(7 | 8)),
                            _ => matches!(nal.first().map(|h| (h >> 1) & 0x3F), Some(32..=34)),
                        };
                        if ps {
                            v.extend_from_slice(&[0, 0, 0, 1]);
                            v.extend_from_slice(nal);
                        }
                    }
                    v
                }
                Frame::AsIs => continue,
            };
        }
    }
    Some(out)
}

/// One packet as the comparison sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    track: usize,
    /// Presentation time in ms, when the input had one.
    pts_ms: Option<i64>,
    keyframe: bool,
    size: usize,
    crc: u32,
}

/// The packets the output must hold, from the input: reframed as the
/// muxer reframes them, times in ms.
fn expected(bytes: &[u8], ext: Option<&str>, specs: &[(Track, Vec<u8>, Frame)]) -> Vec<Seen> {
    let mut scratch = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut scratch), ext).unwrap();
    let mut v = Vec::new();
    while let Ok(Some(p)) = d.next_packet() {
        if p.flags.truncated {
            continue;
        }
        let (t, _, frame) = &specs[p.track];
        let data: Vec<u8> = match frame {
            Frame::AsIs => p.data.to_vec(),
            Frame::Adts => adts_to_raw(p.data).unwrap().1.to_vec(),
            Frame::Av1 => {
                let mut d = p.data;
                while d.starts_with(&[0x12, 0]) {
                    d = &d[2..];
                }
                d.to_vec()
            }
            Frame::AnnexB => {
                let mut buf = vec![0u8; p.data.len() * 2 + 64];
                let mut s = SliceSink::new(&mut buf);
                write_length_prefixed(&mut s, p.data, LengthPrefixOptions::default()).unwrap();
                s.written().to_vec()
            }
        };
        v.push(Seen {
            track: p.track,
            pts_ms: p
                .pts
                .or(p.dts)
                .map(|ts| rescale_q(ts, t.time_base, Rational::new(1, 1000))),
            keyframe: p.flags.keyframe,
            size: data.len(),
            crc: crc32(&data),
        });
    }
    v
}

/// Writes the input into `sink` as Matroska.
fn mux<K: Sink>(bytes: &[u8], ext: Option<&str>, specs: &[(Track, Vec<u8>, Frame)], sink: K) -> mediaslice::Result<K> {
    let mut scratch = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(bytes, &mut scratch), ext)?;
    let mut m = Muxer::new(sink, MuxFormat::Matroska)?;
    for (t, c, _) in specs {
        m.add_track(&TrackSpec::new(t).with_config(c))?;
    }
    while let Ok(Some(p)) = d.next_packet() {
        if !p.flags.truncated {
            m.write_packet(&p)?;
        }
    }
    m.finish()
}

/// The packets of a Matroska output, read back by our demuxer.
fn read_back(out: &[u8]) -> (Vec<Track>, Vec<Seen>) {
    let mut d = Demuxer::open(SliceSource::new(out), Some("mkv")).unwrap();
    let tracks = d.tracks().to_vec();
    let mut v = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        v.push(Seen {
            track: p.track,
            pts_ms: p.pts,
            keyframe: p.flags.keyframe,
            size: p.data.len(),
            crc: crc32(p.data),
        });
    }
    (tracks, v)
}

/// Round-trips one file; `Ok(packets)`, `Err(reason)` when Matroska cannot
/// carry it (then nothing is compared).
fn round_trip(f: &TestFile) -> Result<usize, String> {
    let bytes = f.read();
    let ext = f.ext();
    let ext = ext.as_deref();
    let specs = specs(&bytes, ext).ok_or("does not open")?;
    let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
    let out = match mux(&bytes, ext, &specs, SliceSink::new(&mut buf)) {
        Ok(s) => s.into_written(),
        Err(e) if matches!(e.kind(), ErrorKind::Unsupported | ErrorKind::CapacityExceeded) => return Err(e.to_string()),
        Err(e) => panic!("{}: {e}", f.label()),
    };
    let want = expected(&bytes, ext, &specs);
    let (tracks, got) = read_back(out);
    let label = f.label();
    assert_eq!(tracks.len(), specs.len(), "{label}");
    for (t, (s, _, _)) in tracks.iter().zip(&specs) {
        assert_eq!((t.codec, t.kind), (s.codec, s.kind), "{label}");
        assert_eq!(t.time_base, Rational::new(1, 1000), "{label}");
    }
    assert_eq!(got.len(), want.len(), "{label}: packet count");
    // A negative first time shifts every time to make it 0 (the muxer's
    // avoid-negative rule); times still negative after it read back as none.
    // An Opus track's times are written plus its CodecDelay (pre-skip),
    // which the reader takes off again.
    let delay = |track: usize| -> i64 {
        let (t, c, _) = &specs[track];
        match (t.codec, c.get(10..12)) {
            (Codec::Opus, Some(b)) => {
                let ns = u64::from(u16::from_le_bytes([b[0], b[1]])) * 1_000_000_000 / 48_000;
                rescale_q(ns as i64, Rational::new(1, 1_000_000_000), Rational::new(1, 1000))
            }
            _ => 0,
        }
    };
    let shift = want
        .first()
        .and_then(|w| w.pts_ms.map(|ms| ms + delay(w.track)))
        .unwrap_or(0)
        .min(0)
        .saturating_neg();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            (g.track, g.size, g.crc),
            (w.track, w.size, w.crc),
            "{label}: packet {i}"
        );
        if let Some(ms) = w.pts_ms {
            let block = ms + delay(w.track) + shift;
            let ms = ms + shift;
            assert_eq!(g.pts_ms, (block >= 0).then_some(ms), "{label}: packet {i} pts");
        }
        if tracks[g.track].kind == TrackKind::Video {
            assert_eq!(g.keyframe, w.keyframe, "{label}: packet {i} keyframe");
        }
    }
    Ok(got.len())
}

#[test]
fn every_file_matroska_can_carry_round_trips() {
    let (mut files, mut packets, mut refused) = (0usize, 0usize, 0usize);
    if samples_dir().is_none() {
        println!("../shared/samples absent: skipped; the corpus only");
    }
    for &fam in FAMILIES {
        for f in family_files(fam) {
            // Fuzz reproducers and the like belong to the demuxer tests.
            match round_trip(&f) {
                Ok(n) => {
                    files += 1;
                    packets += n;
                }
                Err(why) => {
                    refused += 1;
                    println!("{}: not carried: {why}", f.label());
                }
            }
        }
    }
    println!("{files} files, {packets} packets round-tripped through Matroska; {refused} refused");
    // 60 corpus files when this was written.
    assert!(files >= 55 && packets >= 3000, "{files} files, {packets} packets");
}

#[test]
fn memory_seeking_and_stream_sinks_agree() {
    for (fam, name) in [
        ("matroska", "h264_aac.mkv"),
        ("mp4", "h264_bframes_aac.mp4"),
        ("mpegts", "h264_aac.ts"),
    ] {
        let Some(f) = family_files(fam).into_iter().find(|f| f.name == name) else {
            println!("{fam}/{name}: absent, skipped");
            continue;
        };
        let bytes = f.read();
        let ext = f.ext();
        let specs = specs(&bytes, ext.as_deref()).unwrap();
        let mut buf = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let slice = mux(&bytes, ext.as_deref(), &specs, SliceSink::new(&mut buf))
            .unwrap()
            .into_written()
            .to_vec();
        let seeking = mux(
            &bytes,
            ext.as_deref(),
            &specs,
            SeekWriterSink::new(VecFile::default()).unwrap(),
        )
        .unwrap();
        assert!(seeking.stats().patches >= 3, "{name}");
        assert_eq!(seeking.into_inner().data, slice, "{name}: slice and seeking writer");
        let mut out = vec![0u8; bytes.len() * 2 + (1 << 20)];
        let len = mux(&bytes, ext.as_deref(), &specs, WriterSink::new(&mut out[..]))
            .unwrap()
            .position() as usize;
        let live = &out[..len];
        // Live: unknown sizes, no patch; the same packets.
        assert!(live
            .windows(8)
            .any(|w| w == [1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]));
        assert_eq!(read_back(live).1, read_back(&slice).1, "{name}: live mode");
    }
}
