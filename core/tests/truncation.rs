//! Truncated inputs: every sample and corpus file of the covered families (up
//! to [`MAX_FILE`] bytes) is cut at several points — eight evenly spaced,
//! inside the first and the last packet, inside the header before the first
//! packet, and inside an index after the last one — and the prefix is opened
//! (an open error is fine) and pulled until the end or an error.
//!
//! The packets delivered must be a prefix of the full file's packets. The
//! last one may be shorter than its full counterpart (the bytes before the
//! cut, same position, timing and flags) when the cut falls inside it and the
//! packet says so (`flags.truncated`), or anywhere for families whose
//! packetisation is the reader's choice (`common::STREAM_EXACT_FAMILIES`). The reader mode must give the same
//! packets as the slice mode on every prefix.
//!
//! Files listed in `core/tests/truncation_exceptions.tsv` (family, file,
//! reason) are known to fail: their failures are printed, not counted. A
//! listed file that passes every cut, or that does not exist, fails the test
//! so the list stays honest.

#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use mediaslice::{Rational, Track, TrackKind};
use std::io::Cursor;

/// Largest file cut (keeps the test fast).
const MAX_FILE: usize = 2 << 20;

fn cut_points(len: usize, full: &Pulled) -> Vec<usize> {
    let mut cuts: Vec<usize> = (1..=8).map(|k| len * k / 9).collect();
    let positioned: Vec<(u64, usize)> = full.packets.iter().filter_map(|p| Some((p.pos?, p.size))).collect();
    if let (Some(&(first, fsize)), Some(&(last, lsize))) = (positioned.first(), positioned.last()) {
        let (first, last) = (first as usize, last as usize);
        cuts.push(first + fsize / 2);
        cuts.push(last + lsize / 2);
        cuts.push(first / 2);
        cuts.push(first.saturating_sub(1));
        let end = positioned.iter().map(|&(p, s)| p as usize + s).max().unwrap_or(len);
        if end + 1 < len {
            cuts.push((end + len) / 2);
        }
    }
    cuts.push(7);
    cuts.retain(|&c| c > 0 && c < len);
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// What identifies a track across a file and its prefixes (a cut may change
/// what the headers say about a track's length, but not these).
fn track_key(t: &Track) -> (u32, TrackKind, Rational) {
    (t.id, t.kind, t.time_base)
}

/// The full file's packets as the prefix should see them: all of them when
/// the prefix has the same tracks; when it has fewer (a demuxer that salvages
/// the tracks of a cut index, reporting a diagnostic), the packets of the
/// tracks it kept, renumbered. Tracks are matched by id, kind and time base.
/// A prefix track with no counterpart gets no reference packets, so any
/// packet it gives fails the check.
fn reference(full: &Pulled, got: &Pulled) -> Vec<Pkt> {
    let mut map: Vec<Option<usize>> = vec![None; full.tracks.len()];
    for (gi, t) in got.tracks.iter().enumerate() {
        if let Some(fi) =
            (0..full.tracks.len()).find(|&fi| map[fi].is_none() && track_key(&full.tracks[fi]) == track_key(t))
        {
            map[fi] = Some(gi);
        }
    }
    full.packets
        .iter()
        .filter_map(|p| {
            let gi = (*map.get(p.track)?)?;
            Some(Pkt { track: gi, ..*p })
        })
        .collect()
}

/// The CRC-32 of the first `size` bytes of packet `index` of the whole file.
fn full_packet_prefix_crc(bytes: &[u8], index: usize, size: usize) -> Option<u32> {
    let mut scratch = vec![0u8; 64 << 20];
    let mut d = mediaslice::Demuxer::open(mediaslice::SliceSource::with_scratch(bytes, &mut scratch), None).ok()?;
    let mut i = 0;
    while let Ok(Some(p)) = d.next_packet() {
        if i == index {
            return p.data.get(..size).map(mediaslice::crc::crc32);
        }
        i += 1;
    }
    None
}

/// Checks that `got` is a prefix of `full` for the input cut at `cut`.
fn check_prefix(fam: &str, bytes: &[u8], full: &Pulled, got: &Pulled, cut: usize) -> Result<(), String> {
    if got.open_err.is_some() {
        return Ok(());
    }
    let want = reference(full, got);
    if got.packets.len() > want.len() {
        return Err(format!(
            "{} packets from the prefix, {} from the whole file",
            got.packets.len(),
            want.len()
        ));
    }
    let n = got.packets.len();
    // Packets flagged `truncated` may only come after every complete one:
    // several streams can each end inside a unit (MPEG-TS flushes each PES in
    // progress), so each is matched with its own full counterpart.
    let complete = got.packets.iter().position(|p| p.truncated).unwrap_or(n);
    for (j, g) in got.packets.iter().enumerate().skip(complete) {
        if !g.truncated {
            return Err(format!(
                "packet {j} follows a truncated packet but is not flagged truncated: {g:?}"
            ));
        }
        let Some((_, w)) = want
            .iter()
            .enumerate()
            .find(|(_, w)| w.track == g.track && w.pts == g.pts && w.pos == g.pos)
        else {
            return Err(format!(
                "truncated packet {j} has no counterpart in the full file: {g:?}"
            ));
        };
        let same_bytes = if g.contiguous {
            g.pos
                .and_then(|p| bytes.get(p as usize..p as usize + g.size))
                .is_some_and(|d| mediaslice::crc::crc32(d) == g.crc)
        } else {
            // `want` may leave out tracks the prefix does not have: find the
            // packet's index in the whole file.
            let fi = full
                .packets
                .iter()
                .position(|p| p.pts == w.pts && p.pos == w.pos && p.size == w.size);
            fi.and_then(|fi| full_packet_prefix_crc(bytes, fi, g.size)) == Some(g.crc)
        };
        // The same size is possible: an unbounded PES cut right after its
        // last TS packet cannot be told from a complete one.
        if !(g.size <= w.size && same_bytes) {
            return Err(format!(
                "truncated packet {j} is not a prefix of its full counterpart: {g:?} vs {w:?}"
            ));
        }
    }
    let n = complete;
    for (i, (g, w)) in got.packets.iter().zip(&want).enumerate().take(n) {
        if g == w {
            continue;
        }
        if i + 1 != n {
            return Err(format!("packet {i} differs: {g:?} vs {w:?}"));
        }
        // The last complete-looking packet may be the bytes of its full
        // counterpart before the cut.
        let inside = w.pos.is_some_and(|p| (p as usize) < cut && cut < p as usize + w.size);
        // In a packet-exact family the demuxer says so (`flags.truncated`).
        let allowed = (inside && g.truncated) || STREAM_EXACT_FAMILIES.contains(&fam);
        let same_head = g.track == w.track
            && g.pts == w.pts
            && g.dts == w.dts
            && g.keyframe == w.keyframe
            && g.pos == w.pos
            && g.size < w.size;
        let same_bytes = if g.contiguous {
            g.pos
                .and_then(|p| bytes.get(p as usize..p as usize + g.size))
                .is_some_and(|d| mediaslice::crc::crc32(d) == g.crc)
        } else {
            // A joined packet (PES over TS packets): compare with the first
            // bytes of the full file's packet.
            full_packet_prefix_crc(bytes, i, g.size) == Some(g.crc)
        };
        if !(allowed && same_head && same_bytes) {
            return Err(format!(
                "last packet {i} is not a prefix of the full one: {g:?} vs {w:?}"
            ));
        }
    }
    Ok(())
}

/// Cuts `bytes` at `cut`: the slice gives a prefix of `full`, and the
/// reader mode the same packets as the slice.
fn check_cut(fam: &str, bytes: &[u8], full: &Pulled, cut: usize, ext: Option<&str>) -> Result<(), String> {
    let prefix = &bytes[..cut];
    let got = pull_slice(prefix, ext, false);
    check_prefix(fam, bytes, full, &got, cut)?;
    let streamed = pull_reader_from(
        StdReader::new(Cursor::new(prefix), None),
        scratch_for(prefix.len()),
        ext,
        false,
    );
    let kind = |p: &Pulled| (p.open_err.map(|e| e.kind()), p.end_err.map(|e| e.kind()));
    if streamed.packets != got.packets || kind(&streamed) != kind(&got) {
        return Err(format!(
            "reader gives {} packets ({:?}), slice {} ({:?})",
            streamed.packets.len(),
            kind(&streamed),
            got.packets.len(),
            kind(&got)
        ));
    }
    Ok(())
}

#[test]
fn truncated_files_give_a_prefix_of_the_packets() {
    let mut failures = Vec::new();
    let exceptions = exceptions_in("truncation_exceptions.tsv");
    let (mut files_cut, mut prefixes) = (0usize, 0usize);
    for &fam in FAMILIES {
        let files = family_files(fam);
        if files.is_empty() || !family_built(&files) {
            println!("{fam}: skipped: family not built");
            continue;
        }
        for f in &files {
            let bytes = f.read();
            if bytes.len() > MAX_FILE {
                continue;
            }
            let ext = f.ext();
            let ext = ext.as_deref();
            let full = pull_slice(&bytes, ext, false);
            if full.open_err.is_some() {
                continue;
            }
            files_cut += 1;
            let mut file_failures = Vec::new();
            for cut in cut_points(bytes.len(), &full) {
                // A transport stream cut exactly between two TS packets looks
                // like a complete file: the PES in progress are flushed as
                // ffmpeg flushes them at the end of a file, so such a cut
                // cannot give a prefix. Cuts inside a TS packet are checked.
                if fam == "mpegts" && [188, 192, 204].iter().any(|n| cut % n == 0) {
                    continue;
                }
                prefixes += 1;
                if let Err(e) = check_cut(fam, &bytes, &full, cut, ext) {
                    file_failures.push(format!("{} cut at {cut}: {e}", f.label()));
                }
            }
            match exceptions.iter().find(|(fa, n, _)| fa == fam && *n == f.name) {
                Some((_, _, reason)) if file_failures.is_empty() => failures.push(format!(
                    "{}: listed in core/tests/truncation_exceptions.tsv ({reason}) but passes every cut now; \
                     remove the line",
                    f.label()
                )),
                Some((_, _, reason)) => {
                    for e in &file_failures {
                        println!("EXCEPTION ({reason}) {e}");
                    }
                }
                None => failures.extend(file_failures),
            }
        }
    }
    if samples_dir().is_some() {
        for (fam, name, _) in &exceptions {
            if FAMILIES.contains(&fam.as_str()) && !family_files(fam).iter().any(|f| &f.name == name) {
                failures.push(format!(
                    "core/tests/truncation_exceptions.tsv: {fam}/{name} is not a file of the family"
                ));
            }
        }
    }
    println!("{files_cut} files, {prefixes} prefixes");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The MPEG-TS and PS inputs of `corpus/regressions` (fuzz findings of the
/// truncation target), cut at every byte (MPEG-TS: inside a TS packet), give
/// a prefix of the whole input's packets, the same in reader mode.
#[test]
fn regression_inputs_give_a_prefix_of_the_packets_at_every_cut() {
    let mut failures = Vec::new();
    for fam in ["mpegts", "mpegps", "flac"] {
        let dir = corpus_dir().join("regressions").join(fam);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for path in entries.flatten().map(|e| e.path()) {
            let bytes = std::fs::read(&path).unwrap();
            let ext = ext_of(&path);
            let ext = ext.as_deref();
            let full = pull_slice(&bytes, ext, false);
            for cut in 1..bytes.len() {
                if fam == "mpegts" && [188, 192, 204].iter().any(|n| cut % n == 0) {
                    continue;
                }
                if let Err(e) = check_cut(fam, &bytes, &full, cut, ext) {
                    failures.push(format!("{} cut at {cut}: {e}", path.display()));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

/// A PMT found after a resync that only the end of the input confirms (the
/// input ends before five packets in a row could be checked) is not taken:
/// the whole input, whose junk after four packets rejects that resync, finds
/// no PMT and does not open, so no prefix may give packets either. The
/// reading loop already stopped at such a resync (fuzz finding 7); the table
/// search at open did not.
#[test]
fn ts_tables_after_a_resync_only_the_end_confirms_are_not_taken() {
    let src = std::fs::read(corpus_dir().join("files/mpegts/h264_aac.ts")).unwrap();
    let pkt = |i: usize| &src[i * 188..(i + 1) * 188];
    let pid = |p: &[u8]| (u16::from(p[1] & 0x1F) << 8) | u16::from(p[2]);
    assert_eq!((pid(pkt(1)), pid(pkt(2)), pid(pkt(3))), (0, 0x1000, 0x100));
    let mut null = vec![0xFFu8; 188];
    null[..4].copy_from_slice(&[0x47, 0x1F, 0xFF, 0x10]);
    // SDT, PAT and three null packets: a confirmed start; junk; the PMT and
    // three video packets (four in a row); junk.
    let mut data = [pkt(0), pkt(1), &null, &null, &null].concat();
    data.extend_from_slice(&[0u8; 100]);
    let run = data.len();
    data.extend_from_slice(&[pkt(2), pkt(3), pkt(4), pkt(5)].concat());
    data.extend_from_slice(&[0u8; 400]);
    let full = pull_slice(&data, Some("ts"), false);
    assert!(full.open_err.is_some(), "the whole input has no confirmed PMT");
    for cut in run..data.len() {
        let got = pull_slice(&data[..cut], Some("ts"), false);
        assert!(
            got.open_err.is_some() || got.packets.is_empty(),
            "cut at {cut}: {} packets where the whole input does not open",
            got.packets.len()
        );
    }
}
