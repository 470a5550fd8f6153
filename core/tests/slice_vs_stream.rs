//! One parser, two kinds of input: every sample and corpus file of the
//! covered families gives the same tracks, packets (every field, and the
//! bytes by size and CRC-32), tags and end of stream through a
//! `SliceSource`, through a `ReaderSource` over the file, and through a
//! `ReaderSource` over a reader of the same bytes in memory that returns at
//! most 7 bytes per call.
//! Where the demuxer states `max_packet_size`, no packet is larger.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::*;

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
            // 7 bytes a read from the bytes in memory: the same refills as
            // from the file (read above), without a system call for each.
            let seven = StdReader::new(std::io::Cursor::new(&bytes[..]), Some(7));
            let chunked = pull_reader_from(seven, scratch_for(bytes.len()), ext.as_deref(), true);
            if let Some(d) = first_difference(&slice, &reader) {
                failures.push(format!("{}: slice vs reader: {d}", f.label()));
            }
            if let Some(d) = first_difference(&slice, &chunked) {
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
