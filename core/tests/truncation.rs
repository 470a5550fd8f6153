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

use crate::common;

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

/// Families whose prefixes are compared stream by stream: a cut leaves a
/// unit in progress in each stream, and the end of the input flushes them
/// in its own order (docs/formats/mpegts.md), so only each stream's packets
/// must be a prefix of the whole file's.
const PER_TRACK_FAMILIES: &[&str] = &["mpegts", "mpegps"];

/// Index in the whole file's packets of `w` (a packet of `reference`, whose
/// track may be renumbered).
fn full_index(full: &Pulled, w: &Pkt) -> Option<usize> {
    full.packets
        .iter()
        .position(|p| p.pts == w.pts && p.pos == w.pos && p.size == w.size)
}

/// Diagnostics a demuxer reports only when the start, the sync or the timing
/// it chose depends on bytes past the end of the input: a longer input may
/// choose otherwise, so such a prefix is not compared (the `truncation` fuzz
/// target's `KNOWN_TRUNCATION_EXCEPTIONS` excuses the same codes;
/// docs/fuzzing.md, "What `truncation` accepts").
const UNDECIDED_AT_THE_END: &[&str] = &[
    "ts.unconfirmed-sync",
    "mp3.unconfirmed-start",
    "annexb.unconfirmed-rate",
    "ts.unconfirmed-codec",
    "m4v.unconfirmed-rate",
];

/// Whether a prefix says that what it gives depends on bytes past its end.
fn undecided(got: &Pulled) -> bool {
    got.diagnostics.iter().any(|c| UNDECIDED_AT_THE_END.contains(c))
}

/// Diagnostics that say a prefix cannot know its video keyframe flags (the
/// whole input's index, past the cut, marks them): its packets are compared
/// without them, as the `truncation` fuzz target does (`KEYFRAME_UNDECIDED`).
const KEYFRAME_UNDECIDED: &[&str] = &["avi.unconfirmed-keyframe"];

/// Checks that `got` is a prefix of `full` for the input cut at `cut`.
fn check_prefix(fam: &str, bytes: &[u8], full: &Pulled, got: &Pulled, cut: usize) -> Result<(), String> {
    if got.open_err.is_some() || undecided(got) {
        return Ok(());
    }
    let mut want = reference(full, got);
    let unkeyed;
    let got = if got.diagnostics.iter().any(|c| KEYFRAME_UNDECIDED.contains(c)) {
        let key_off = |p: &Pkt| Pkt { keyframe: false, ..*p };
        want = want.iter().map(key_off).collect();
        unkeyed = Pulled {
            packets: got.packets.iter().map(key_off).collect(),
            ..got.clone()
        };
        &unkeyed
    } else {
        got
    };
    if !PER_TRACK_FAMILIES.contains(&fam) {
        return check_packets(fam, bytes, full, &want, &got.packets, cut);
    }
    for t in 0..got.tracks.len() {
        let w: Vec<Pkt> = want.iter().filter(|p| p.track == t).copied().collect();
        let g: Vec<Pkt> = got.packets.iter().filter(|p| p.track == t).copied().collect();
        check_packets(fam, bytes, full, &w, &g, cut).map_err(|e| format!("track {t}: {e}"))?;
    }
    Ok(())
}

/// Checks that the packets `got` are a prefix of `want` (the whole file's,
/// as `reference` maps them).
fn check_packets(fam: &str, bytes: &[u8], full: &Pulled, want: &[Pkt], got: &[Pkt], cut: usize) -> Result<(), String> {
    if got.len() > want.len() {
        return Err(format!(
            "{} packets from the prefix, {} from the whole file",
            got.len(),
            want.len()
        ));
    }
    let n = got.len();
    // Packets flagged `truncated` may only come after every complete one:
    // several streams can each end inside a unit (MPEG-TS flushes each PES in
    // progress), so each is matched with its own full counterpart.
    let complete = got.iter().position(|p| p.truncated).unwrap_or(n);
    for (j, g) in got.iter().enumerate().skip(complete) {
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
            full_index(full, w).and_then(|fi| full_packet_prefix_crc(bytes, fi, g.size)) == Some(g.crc)
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
    for (i, (g, w)) in got.iter().zip(want).enumerate().take(n) {
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
            full_index(full, w).and_then(|fi| full_packet_prefix_crc(bytes, fi, g.size)) == Some(g.crc)
        };
        if !(allowed && same_head && same_bytes) {
            return Err(format!(
                "last packet {i} is not a prefix of the full one: {g:?} vs {w:?}"
            ));
        }
    }
    Ok(())
}

/// Whether a prefix was compared with the whole file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compared {
    Yes,
    /// The prefix does not open (fine: nothing is given).
    NotOpened,
    /// The prefix says it is [`undecided`].
    Undecided,
}

/// Cuts `bytes` at `cut`: the slice gives a prefix of `full`, and the
/// reader mode the same packets as the slice. Returns whether the prefix was
/// compared with `full`.
fn check_cut(fam: &str, bytes: &[u8], full: &Pulled, cut: usize, ext: Option<&str>) -> Result<Compared, String> {
    let prefix = &bytes[..cut];
    let got = pull_slice(prefix, ext, false);
    check_prefix(fam, bytes, full, &got, cut)?;
    let compared = if got.open_err.is_some() {
        Compared::NotOpened
    } else if undecided(&got) {
        Compared::Undecided
    } else {
        Compared::Yes
    };
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
    Ok(compared)
}

#[test]
fn truncated_files_give_a_prefix_of_the_packets() {
    let mut failures = Vec::new();
    let exceptions = exceptions_in("truncation_exceptions.tsv");
    let (mut files_cut, mut prefixes, mut not_opened, mut undecided_n) = (0usize, 0usize, 0usize, 0usize);
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
                match check_cut(fam, &bytes, &full, cut, ext) {
                    Ok(Compared::Yes) => {}
                    Ok(Compared::NotOpened) => not_opened += 1,
                    Ok(Compared::Undecided) => undecided_n += 1,
                    Err(e) => file_failures.push(format!("{} cut at {cut}: {e}", f.label())),
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
    println!(
        "{files_cut} files, {prefixes} prefixes ({not_opened} do not open, {undecided_n} not compared: undecided at the end)"
    );
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
            let mut compared = 0usize;
            for cut in 1..bytes.len() {
                if fam == "mpegts" && [188, 192, 204].iter().any(|n| cut % n == 0) {
                    continue;
                }
                match check_cut(fam, &bytes, &full, cut, ext) {
                    Ok(c) => compared += (c == Compared::Yes) as usize,
                    Err(e) => failures.push(format!("{} cut at {cut}: {e}", path.display())),
                }
            }
            // A regression file must test something: some of its cuts open
            // and are decided.
            if compared == 0 {
                failures.push(format!("{}: no cut was compared", path.display()));
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

/// An undescribed private stream (stream type 0x06) is identified from its
/// first PES. A prefix that ends before that PES keeps it a data track and
/// says so (`ts.unconfirmed-codec`), since the whole file names it AAC (a
/// `truncation` fuzz find: the prefix's data track had no counterpart).
#[test]
fn ts_private_stream_cut_before_its_first_pes_is_reported() {
    let bytes = std::fs::read(corpus_dir().join("files/mpegts/h264_aac.m2ts")).unwrap();
    let probe = |b: &[u8]| {
        let d = mediaslice::Demuxer::open(mediaslice::SliceSource::new(b), Some("m2ts")).unwrap();
        let t = &d.tracks()[1];
        (t.codec_tag, t.kind, d.diagnostics().contains("ts.unconfirmed-codec"))
    };
    assert_eq!(probe(&bytes), (0x06, TrackKind::Audio, false));
    // The first audio PES starts at 10 392.
    assert_eq!(probe(&bytes[..10_000]), (0x06, TrackKind::Data, true));
    assert_eq!(probe(&bytes[..12_000]), (0x06, TrackKind::Audio, false));
}

/// Two `truncation` fuzz finds (AVI without an index, read by walking
/// `movi`): damage makes the walk resynchronise, and the chunk it should
/// resume at (a video chunk, or a chunk such as `JUNK` that covers the rest
/// of the damage) runs past the end of a prefix. The prefix rejected that
/// header (its size runs past the end) and resynchronised on chunk headers
/// inside the chunk, giving packets the whole file does not. Such headers
/// are now taken: a stream chunk (of a size a packet may have) is cut, other
/// chunks end the walk. Every cut from the damage to past the chunk's end
/// gives a prefix.
/// Fuzz finding 48 and its class. An `idx1` whose entries stop matching
/// the file after an empty one (a dropped frame): the whole file counted that
/// entry and then walked on from the end of the last chunk with data, before
/// it, counting that stretch again (the packet at 7600 was 48, ffprobe's and
/// the prefix's 47). And a file whose `idx1` marks the keyframes
/// (msmpeg4v2): a prefix without its index takes every frame for one (as
/// ffmpeg does), says `avi.unconfirmed-keyframe`, and is compared without
/// the flags.
#[test]
fn avi_prefixes_without_the_index_agree_but_for_keyframes() {
    for (name, pos, pts, cuts) in [
        (
            "empty-index-entry-before-an-index-mismatch.avi",
            7600,
            47,
            (7_000..12_000).step_by(1),
        ),
        (
            "msmpeg4v2-keyframes-from-the-index.avi",
            7326,
            1,
            (5_800..22_170).step_by(7),
        ),
        // The same file with idx1's entry for the chunk at 17,898 damaged
        // (the `truncation` fuzz finding of 7 December 2026): the whole file
        // must give that chunk, as its prefixes without idx1 and ffprobe do.
        (
            "idx1-omits-a-chunk-the-prefix-walk-finds.avi",
            17906,
            21,
            (5_800..22_170).step_by(7),
        ),
    ] {
        let path = corpus_dir().join("regressions/avi").join(name);
        let bytes = std::fs::read(&path).unwrap();
        let full = pull_slice(&bytes, Some("avi"), false);
        assert!(
            full.packets.iter().any(|p| p.pos == Some(pos) && p.pts == Some(pts)),
            "{name}"
        );
        let mut compared = 0;
        let n = cuts.len();
        for cut in cuts {
            match check_cut("avi", &bytes, &full, cut, Some("avi")) {
                Ok(c) => compared += (c == Compared::Yes) as usize,
                Err(e) => panic!("{name} cut at {cut}: {e}"),
            }
        }
        assert_eq!(compared, n, "{name}");
    }
}

#[test]
fn avi_resync_at_a_chunk_the_end_cuts_gives_a_prefix() {
    for (name, pos, cuts) in [
        ("resync-to-a-chunk-the-end-cuts.avi", 112_217, 112_200..118_800),
        ("resync-to-a-list-or-junk-the-end-cuts.avi", 56_943, 42_300..57_000),
    ] {
        let path = corpus_dir().join("regressions/avi").join(name);
        let bytes = std::fs::read(&path).unwrap();
        let full = pull_slice(&bytes, Some("avi"), false);
        assert!(full.packets.iter().any(|p| p.pos == Some(pos)), "{name}");
        let mut compared = 0;
        let n = cuts.len();
        for cut in cuts {
            match check_cut("avi", &bytes, &full, cut, Some("avi")) {
                Ok(c) => compared += (c == Compared::Yes) as usize,
                Err(e) => panic!("{name} cut at {cut}: {e}"),
            }
        }
        assert_eq!(compared, n, "{name}");
    }
}
