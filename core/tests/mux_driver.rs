//! The write side's driver, proved with the packet dump
//! (`MuxFormat::Dump`): every corpus file is demuxed with `Demuxer`, every
//! packet written through `Muxer` into a `SliceSink`, and the dump read back
//! must give the same tracks, codec configurations and packets (times,
//! flags, bytes) as a plain pull. The same file through a stream sink and a
//! seeking writer gives the same bytes, but for the packet count a stream
//! cannot patch. That the loop allocates nothing is checked in
//! `std-adapter/tests/zero_alloc.rs` (a counting allocator needs `unsafe`,
//! which core forbids for its tests too).
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::mux::VecFile;
use common::*;
use mediaslice::crc::crc32;
use mediaslice::mux::dump::{
    DumpHeader, DumpPacketHeader, DumpTrackFields, DUMP_MAGIC, DUMP_TRAILER_TRACK, DUMP_UNKNOWN_COUNT,
};
use mediaslice::{
    Demuxer, ErrorKind, MuxFormat, Muxer, Rational, SeekWriterSink, Sink, SliceSink, SliceSource, TrackSpec, WriterSink,
};
use zerocopy::FromBytes;

/// A track record of a dump, owned.
#[derive(Debug, PartialEq, Eq)]
struct DumpTrack {
    codec: String,
    time_base: Rational,
    config: Vec<u8>,
}

/// A dump, read back.
#[derive(Debug)]
struct Dump {
    header_count: u64,
    tracks: Vec<DumpTrack>,
    packets: Vec<Pkt>,
    trailer_count: u64,
}

fn take<'a>(b: &mut &'a [u8], n: usize) -> &'a [u8] {
    let (head, rest) = b.split_at(n);
    *b = rest;
    head
}

fn read<T: FromBytes>(b: &mut &[u8]) -> T {
    let (v, rest) = T::read_from_prefix(b).unwrap();
    *b = rest;
    v
}

/// Reads a dump as `core/src/mux/dump.rs` documents it.
fn parse_dump(mut b: &[u8]) -> Dump {
    let h: DumpHeader = read(&mut b);
    assert_eq!(h.magic, DUMP_MAGIC);
    let mut tracks = Vec::new();
    for _ in 0..h.tracks.get() {
        let n = take(&mut b, 1)[0] as usize;
        let codec = String::from_utf8(take(&mut b, n).to_vec()).unwrap();
        let f: DumpTrackFields = read(&mut b);
        let config = take(&mut b, f.config_len.get() as usize).to_vec();
        tracks.push(DumpTrack {
            codec,
            time_base: Rational::new(f.time_base_num.get(), f.time_base_den.get()),
            config,
        });
    }
    let mut packets = Vec::new();
    loop {
        if b.len() == 12 && b[..4] == DUMP_TRAILER_TRACK.to_be_bytes() {
            let trailer_count = u64::from_be_bytes(b[4..].try_into().unwrap());
            return Dump {
                header_count: h.packets.get(),
                tracks,
                packets,
                trailer_count,
            };
        }
        let p: DumpPacketHeader = read(&mut b);
        let data = take(&mut b, p.size.get() as usize);
        let time = |t: i64| (t != i64::MIN).then_some(t);
        packets.push(Pkt {
            track: p.track.get() as usize,
            pts: time(p.pts.get()),
            dts: time(p.dts.get()),
            duration: None,
            keyframe: p.flags & 1 != 0,
            discard: p.flags & 2 != 0,
            truncated: p.flags & 4 != 0,
            pos: None,
            contiguous: false,
            size: data.len(),
            crc: crc32(data),
        });
    }
}

/// The fields a dump keeps.
fn kept(p: &Pkt) -> Pkt {
    Pkt {
        duration: None,
        pos: None,
        contiguous: false,
        ..*p
    }
}

/// Demuxes `bytes` and writes every track and packet through a `Muxer`
/// into `sink`; returns the sink and how many packets were written.
fn remux<K: Sink>(bytes: &[u8], ext: Option<&str>, sink: K) -> mediaslice::Result<(K, u64)> {
    let mut scratch = scratch_for(bytes.len());
    let mut demuxer = Demuxer::open(SliceSource::with_scratch(bytes, &mut scratch), ext)?;
    let mut muxer = Muxer::new(sink, MuxFormat::Dump)?;
    for i in 0..demuxer.tracks().len() {
        let track = demuxer.tracks()[i].clone();
        let config = demuxer.codec_config(i)?;
        assert_eq!(muxer.add_track(&TrackSpec::new(&track).with_config(config))?, i);
    }
    // Stops at the first error, as a remux of a damaged input would after
    // its last complete packet.
    while let Ok(Some(p)) = demuxer.next_packet() {
        muxer.write_packet(&p)?;
    }
    let n = muxer.packets();
    Ok((muxer.finish()?, n))
}

/// Bytes a dump of `pulled` takes.
fn dump_len(pulled: &Pulled, configs: usize) -> usize {
    let per_track: usize = pulled.tracks.iter().map(|t| 1 + t.codec.ffmpeg_name().len() + 12).sum();
    let payload: usize = pulled.packets.iter().map(|p| p.size + 25).sum();
    20 + per_track + configs + payload + 12
}

#[test]
fn every_corpus_file_round_trips_through_the_dump() {
    let mut files_checked = 0usize;
    let mut packets = 0usize;
    for &fam in FAMILIES {
        for f in family_files(fam).into_iter().filter(|f| f.origin == Origin::Corpus) {
            let bytes = f.read();
            let ext = f.ext();
            let want = pull_slice(&bytes, ext.as_deref(), false);
            if want.open_err.is_some() {
                continue;
            }
            // The configurations, as the demuxer gives them: opened with a
            // scratch, as `pull_slice` and `remux` are, so that streams that
            // need one (Ogg cover art) are there too.
            let mut scratch = scratch_for(bytes.len());
            let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), ext.as_deref()).unwrap();
            let configs: Vec<Vec<u8>> = (0..want.tracks.len())
                .map(|i| {
                    d.codec_config(i)
                        .unwrap_or_else(|e| panic!("{}: track {i}: {e}", f.label()))
                        .to_vec()
                })
                .collect();
            let mut buf = vec![0u8; dump_len(&want, configs.iter().map(Vec::len).sum())];
            let (sink, n) = remux(&bytes, ext.as_deref(), SliceSink::new(&mut buf))
                .unwrap_or_else(|e| panic!("{}: {e}", f.label()));
            assert_eq!(sink.remaining(), 0, "{}: the dump's length", f.label());
            let got = parse_dump(sink.written());
            let label = f.label();
            assert_eq!(n as usize, want.packets.len(), "{label}");
            assert_eq!((got.header_count, got.trailer_count), (n, n), "{label}");
            assert_eq!(got.tracks.len(), want.tracks.len(), "{label}");
            for ((g, t), c) in got.tracks.iter().zip(&want.tracks).zip(&configs) {
                assert_eq!(
                    (g.codec.as_str(), g.time_base),
                    (t.codec.ffmpeg_name(), t.time_base),
                    "{label}"
                );
                assert_eq!(&g.config, c, "{label}");
            }
            let want_packets: Vec<Pkt> = want.packets.iter().map(kept).collect();
            assert_eq!(got.packets, want_packets, "{label}");
            files_checked += 1;
            packets += got.packets.len();
        }
    }
    println!("{files_checked} corpus files, {packets} packets through the dump");
    // 75 corpus files and 4875 packets when this was written: far fewer means
    // files stopped opening and were skipped.
    assert!(
        files_checked >= 70 && packets >= 4000,
        "{files_checked} files, {packets} packets"
    );
}

fn corpus_file(family: &str, name: &str) -> (Vec<u8>, Option<String>) {
    let f = family_files(family)
        .into_iter()
        .find(|f| f.origin == Origin::Corpus && f.name == name)
        .unwrap_or_else(|| panic!("corpus/files/{family}/{name}"));
    (f.read(), f.ext())
}

#[test]
fn a_slice_a_seeking_writer_and_a_stream_give_the_same_dump() {
    let (bytes, ext) = corpus_file("matroska", "h264_aac.mkv");
    let mut buf = vec![0u8; bytes.len() * 2];
    let (slice, n) = remux(&bytes, ext.as_deref(), SliceSink::new(&mut buf)).unwrap();
    let slice = slice.into_written().to_vec();
    assert!(n > 100);

    let (seeking, _) = remux(&bytes, ext.as_deref(), SeekWriterSink::new(VecFile::default()).unwrap()).unwrap();
    assert_eq!(seeking.stats().patches, 1);
    assert_eq!(seeking.into_inner().data, slice);

    let mut out = vec![0u8; bytes.len() * 2];
    let (stream, _) = remux(&bytes, ext.as_deref(), WriterSink::new(&mut out[..])).unwrap();
    let len = stream.position() as usize;
    let got = parse_dump(&out[..len]);
    assert_eq!((got.header_count, got.trailer_count), (DUMP_UNKNOWN_COUNT, n));
    // The bytes after the header's count are the same.
    assert_eq!(out[20..len], slice[20..]);
}

#[test]
fn a_full_sink_is_a_clean_error() {
    let (bytes, ext) = corpus_file("mp4", "h264_aac.mp4");
    for room in [0usize, 19, 200, 5000] {
        let mut buf = vec![0u8; room];
        let e = remux(&bytes, ext.as_deref(), SliceSink::new(&mut buf)).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::SinkFull, "{room}: {e}");
        assert!(e.offset() <= room as u64, "{room}: {e}");
    }
}
