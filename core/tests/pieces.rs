//! Packets in pieces (`Demuxer::next_packet_pieces`) against joined packets
//! (`Demuxer::next_packet`): for every sample and corpus file of every
//! family, through a `SliceSource` and through a `ReaderSource` that
//! returns at most 7 bytes per read, the same packets (every field, the
//! size, the CRC-32 of the bytes in order), the same end and the same
//! diagnostics. MPEG-TS, and each format whose `*-pieces` feature is on
//! (Ogg, ASF), must hand some packets out in pieces, or the comparison would
//! prove nothing about them.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeMap;

use common::*;
use mediaslice::crc::{crc32, Crc32};
use mediaslice::{Demuxer, Error, ReaderSource, SliceSource, Source};

/// Packets pulled in pieces, and how many came in more than one piece.
struct PulledPieces {
    pulled: Pulled,
    scattered: usize,
    pieces: usize,
}

fn pull_pieces<S: Source>(src: S, ext: Option<&str>) -> PulledPieces {
    let mut out = PulledPieces {
        pulled: Pulled::default(),
        scattered: 0,
        pieces: 0,
    };
    let mut d = match Demuxer::open(src, ext) {
        Ok(d) => d,
        Err(e) => {
            out.pulled.open_err = Some(e);
            return out;
        }
    };
    out.pulled.tracks = d.tracks().to_vec();
    out.pulled.max_packet = d.max_packet_size();
    let mut crcs: Vec<(Crc32, u64)> = vec![(Crc32::new(), 0); out.pulled.tracks.len()];
    let mut end: Option<Error> = None;
    loop {
        let mut p = match d.next_packet_pieces() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => {
                end = Some(e);
                break;
            }
        };
        let scattered = p.is_scattered();
        if scattered {
            assert!(p.packet.data.is_empty(), "a packet in pieces has no data slice");
            assert!(!p.packet.contiguous, "a packet in pieces is not contiguous");
        }
        let (len, facts) = (p.len(), p.packet);
        let mut crc = Crc32::new();
        let (mut size, mut n) = (0usize, 0usize);
        let piece_err = loop {
            match p.next_piece() {
                Ok(Some(piece)) => {
                    if !scattered {
                        assert_eq!(piece, facts.data, "a whole packet's one piece is its data");
                    }
                    crc.update(piece);
                    if let Some((c, _)) = crcs.get_mut(facts.track) {
                        c.update(piece);
                    }
                    size += piece.len();
                    n += 1;
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        if let Some(e) = piece_err {
            end = Some(e);
            break;
        }
        assert_eq!(size, len, "the pieces hold PacketPieces::len bytes");
        assert!(p.next_piece().unwrap().is_none(), "the walk stays ended");
        if let Some((_, b)) = crcs.get_mut(facts.track) {
            *b += size as u64;
        }
        out.scattered += usize::from(scattered);
        out.pieces += n;
        out.pulled.packets.push(Pkt {
            track: facts.track,
            pts: facts.pts,
            dts: facts.dts,
            duration: facts.duration,
            keyframe: facts.flags.keyframe,
            discard: facts.flags.discard,
            truncated: facts.flags.truncated,
            pos: facts.pos,
            contiguous: facts.contiguous,
            size,
            crc: crc.finish(),
        });
    }
    out.pulled.end_err = end;
    out.pulled.stream_crc = crcs.iter().map(|(c, n)| (c.finish(), *n)).collect();
    out.pulled.diagnostics = d.diagnostics().iter().map(|(x, _)| x.code).collect();
    out
}

#[test]
fn pieces_give_the_joined_packets_bytes_and_facts() {
    let mut failures = Vec::new();
    // Per family: packets in pieces, pieces.
    let mut scattered: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut files = 0usize;
    for &fam in FAMILIES {
        for f in family_files(fam) {
            let bytes = f.read();
            let ext = f.ext();
            let joined = pull_slice(&bytes, ext.as_deref(), false);
            let mut scratch = scratch_for(bytes.len());
            let sliced = pull_pieces(SliceSource::with_scratch(&bytes, &mut scratch), ext.as_deref());
            // The reader over the bytes in memory, 7 bytes a read: the
            // same refills as over the file (`slice_vs_stream` reads the
            // files themselves), without a system call for each.
            let cursor = || StdReader::new(std::io::Cursor::new(&bytes[..]), Some(7));
            let reader = ReaderSource::new(cursor(), scratch_for(bytes.len())).unwrap();
            let read = pull_pieces(reader, ext.as_deref());
            let joined_read = pull_reader_from(cursor(), scratch_for(bytes.len()), ext.as_deref(), false);
            for (how, ours, theirs) in [("slice", &sliced, &joined), ("reader", &read, &joined_read)] {
                if let Some(d) = first_difference(theirs, &ours.pulled) {
                    failures.push(format!("{} ({how}): {d}", f.label()));
                } else if theirs.diagnostics != ours.pulled.diagnostics {
                    failures.push(format!(
                        "{} ({how}): diagnostics {:?} vs {:?}",
                        f.label(),
                        theirs.diagnostics,
                        ours.pulled.diagnostics
                    ));
                }
            }
            assert_eq!(
                sliced.scattered,
                read.scattered,
                "{}: the same packets in pieces",
                f.label()
            );
            if IN_PIECES.contains(&fam) {
                let e = scattered.entry(fam).or_default();
                e.0 += sliced.scattered;
                e.1 += sliced.pieces;
            } else {
                assert_eq!(sliced.scattered, 0, "{}: only {IN_PIECES:?} give pieces", f.label());
            }
            files += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for fam in IN_PIECES {
        let (n, k) = scattered.get(fam).copied().unwrap_or_default();
        println!("{files} files: {n} {fam} packets in pieces ({k} pieces), every one equal to its joined packet");
        // corpus/files has MPEG-TS packets across TS packets and ASF
        // objects in fragments; Ogg packets across pages are only in the
        // samples (the unit tests of `format/ogg` build some).
        if *fam != "ogg" || samples_dir().is_some() {
            assert!(n > 0, "no {fam} packet came in pieces");
        } else {
            println!("note: no samples: {fam} packets in pieces are not required (corpus/files has none)");
        }
    }
}

/// The families whose packets split across the container's units come in
/// pieces (with the core features this test is built with).
const IN_PIECES: &[&str] = &[
    "mpegts",
    #[cfg(feature = "ogg-pieces")]
    "ogg",
    #[cfg(feature = "asf-pieces")]
    "asf",
];

#[test]
fn join_into_copies_the_pieces_and_refuses_a_short_buffer() {
    let path = corpus_dir().join("files/mpegts/h264_aac.ts");
    let bytes = std::fs::read(&path).unwrap();
    let mut scratch = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), Some("ts")).unwrap();
    let mut joined = Vec::new();
    while let Some(p) = d.next_packet().unwrap() {
        joined.push(crc32(p.data));
    }
    let mut scratch = scratch_for(bytes.len());
    let mut d = Demuxer::open(SliceSource::with_scratch(&bytes, &mut scratch), Some("ts")).unwrap();
    let mut out = vec![0u8; bytes.len()];
    let (mut i, mut scattered) = (0usize, 0usize);
    while let Some(mut p) = d.next_packet_pieces().unwrap() {
        if p.is_scattered() && p.len() > 1 {
            scattered += 1;
            let short = &mut out[..p.len() - 1];
            assert!(p.join_into(short).is_err(), "a buffer one byte short is refused");
        }
        let n = p.join_into(&mut out).unwrap();
        assert_eq!(n, p.len());
        assert_eq!(crc32(&out[..n]), joined[i], "packet {i}");
        i += 1;
    }
    assert_eq!(i, joined.len());
    assert!(scattered > 0, "h264_aac.ts has PES across TS packets");
}
