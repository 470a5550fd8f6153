//! One parser, two kinds of input: every sample and corpus file of the
//! covered families gives the same tracks, packets (every field, and the
//! bytes by size and CRC-32), tags and end of stream through a
//! `SliceSource`, through a `ReaderSource` over the file, and through a
//! `ReaderSource` over a reader that returns at most 7 bytes per call.
//! Where the demuxer states `max_packet_size`, no packet is larger.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use mediaslice::Error;

/// Compares two pulls; returns the first difference.
fn diff(a: &Pulled, b: &Pulled) -> Option<String> {
    let kind = |e: &Option<Error>| e.map(|e| e.kind());
    if kind(&a.open_err) != kind(&b.open_err) {
        return Some(format!("open: {:?} vs {:?}", a.open_err, b.open_err));
    }
    if a.tracks != b.tracks {
        return Some("tracks differ".into());
    }
    if a.max_packet != b.max_packet {
        return Some(format!("max_packet_size {:?} vs {:?}", a.max_packet, b.max_packet));
    }
    if a.packets.len() != b.packets.len() {
        let i = a.packets.iter().zip(&b.packets).position(|(x, y)| x != y);
        return Some(format!(
            "{} vs {} packets (first difference at {i:?}); ends {:?} vs {:?}",
            a.packets.len(),
            b.packets.len(),
            a.end_err,
            b.end_err
        ));
    }
    if let Some(i) = a.packets.iter().zip(&b.packets).position(|(x, y)| x != y) {
        return Some(format!("packet {i}: {:?} vs {:?}", a.packets[i], b.packets[i]));
    }
    if kind(&a.end_err) != kind(&b.end_err) {
        return Some(format!("end: {:?} vs {:?}", a.end_err, b.end_err));
    }
    if a.stream_crc != b.stream_crc {
        return Some("stream CRCs differ".into());
    }
    if a.tags != b.tags {
        return Some(format!("tags: {:?} vs {:?}", a.tags, b.tags));
    }
    if kind(&a.tag_err) != kind(&b.tag_err) {
        return Some(format!("tag end: {:?} vs {:?}", a.tag_err, b.tag_err));
    }
    None
}

#[test]
fn slice_and_reader_give_identical_packets() {
    let mut failures = Vec::new();
    let mut checked = 0usize;
    for &fam in FAMILIES {
        let files = family_files(fam);
        if files.is_empty() || !family_built(&files) {
            println!("{fam}: skipped: family not built");
            continue;
        }
        for f in &files {
            let bytes = f.read();
            let ext = f.ext();
            let slice = pull_slice(&bytes, ext.as_deref(), true);
            let reader = pull_reader(&f.path, ext.as_deref(), None, true);
            let chunked = pull_reader(&f.path, ext.as_deref(), Some(7), true);
            if let Some(d) = diff(&slice, &reader) {
                failures.push(format!("{}: slice vs reader: {d}", f.label()));
            }
            if let Some(d) = diff(&slice, &chunked) {
                failures.push(format!("{}: slice vs 7-byte reader: {d}", f.label()));
            }
            if let Some(max) = slice.max_packet {
                if let Some(p) = slice.packets.iter().find(|p| p.size > max) {
                    failures.push(format!(
                        "{}: max_packet_size {max} but a packet of {} bytes at {:?}",
                        f.label(),
                        p.size,
                        p.pos
                    ));
                }
            }
            // Packets that say they are contiguous name their bytes in the input.
            for p in slice.packets.iter().filter(|p| p.contiguous) {
                let ok = p
                    .pos
                    .and_then(|pos| bytes.get(pos as usize..pos as usize + p.size))
                    .is_some_and(|d| mediaslice::crc::crc32(d) == p.crc);
                if !ok {
                    failures.push(format!(
                        "{}: contiguous packet at {:?} is not the input there",
                        f.label(),
                        p.pos
                    ));
                    break;
                }
            }
            checked += 1;
        }
    }
    println!("{checked} files checked in three modes");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
