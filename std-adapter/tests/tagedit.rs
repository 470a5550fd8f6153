//! Tag editing (`mediaslice_std::tagedit`): for every corpus and sample
//! file of each supported format, title, artist, album and date are set in
//! place and by copy, and read back by our reader, ffprobe and exiftool:
//! the new values present, every other tag unchanged, every packet
//! unchanged. Failures leave the input byte-identical and no output.
//!
//! Samples come from `$MEDIASLICE_SAMPLES` or `../shared/samples`; without
//! them only the corpus runs (the test says so).

use crate::tagedit_common;

use mediaslice_std::tagedit::{edit, EditMode, Edits};
use std::path::Path;
use tagedit_common::*;

/// Files whose old tags neither reader saw, and which the edit brings
/// into view, with the field they then show: the Matroska sample whose
/// Tags only a second SeekHead at its end points to (neither ffprobe nor
/// our reader follows it); the copy that makes room for its title moves
/// the new Tags, its old SimpleTags kept, before the Clusters, where its
/// `ENCODER` now shows over the Info's MuxingApp, and its track tags
/// (`BPS`, `DURATION`, ...) appear on the streams.
const NEWLY_SEEN: [(&str, &str); 1] = [("matroska-demuxer__multi_seekhead.mkv", "encoder")];

/// What a file looked like before an edit.
#[derive(Clone)]
struct Before {
    packets: Vec<PacketKey>,
    ours: serde_json::Map<String, serde_json::Value>,
    ffprobe: Option<serde_json::Map<String, serde_json::Value>>,
    /// ffprobe's stream tags, compared whole (Matroska: track tags are
    /// kept byte for byte).
    streams: Option<Vec<serde_json::Value>>,
}

fn is_matroska(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "mkv" || e == "mka" || e == "webm")
}

/// [`WANT`] under the names our reader shows: it shows a Matroska `DATE`
/// SimpleTag (what ffmpeg writes and ffprobe shows) as `DATE`, and the
/// spec's `DATE_RELEASED` as `date`.
fn our_want(path: &Path) -> Vec<(&'static str, &'static str)> {
    WANT.iter()
        .map(|&(k, v)| {
            if k == "date" && is_matroska(path) {
                ("DATE", v)
            } else {
                (k, v)
            }
        })
        .collect()
}

/// Checks an edited file against `before` by all three readers (and
/// mkvmerge for Matroska).
fn verify(path: &Path, before: &Before) {
    let (after, _) = packets(path).unwrap_or_else(|| panic!("{}: no longer opens", path.display()));
    assert_eq!(after, before.packets, "{}: packets changed", path.display());
    check_tags("mediaslice", path, &before.ours, &our_tags(path), &our_want(path));
    if let Some(streams) = &before.streams {
        assert_eq!(
            ffprobe_stream_tags(path).as_ref(),
            Some(streams),
            "ffprobe: {}: stream tags changed",
            path.display()
        );
    }
    if path
        .extension()
        .is_some_and(|e| e == "ogg" || e == "oga" || e == "opus")
    {
        ogg_pages_ok(path);
    }
    if is_matroska(path) {
        mkvmerge_accepts(path);
        matroska_index_ok(path);
    }
    if let Some(ff) = &before.ffprobe {
        let after = ffprobe_tags(path).unwrap_or_else(|| panic!("{}: ffprobe no longer reads it", path.display()));
        check_tags("ffprobe", path, ff, &after, &WANT);
    }
    // exiftool reads RIFF INFO text as ISO-8859-1; ffmpeg writes (and we
    // write) UTF-8 there, so WAV is left to ffprobe and our reader.
    let wav = path.extension().is_some_and(|e| e == "wav");
    // exiftool does not walk past a Matroska Cluster of unknown size, even
    // with -ee, so a Tags element after one is out of its reach (ffprobe
    // and mkvmerge, checked above, follow the SeekHead to it); the title,
    // in Info before the Clusters, is still checked.
    let cut_short = is_matroska(path) && unknown_size_cluster(path);
    if cut_short {
        eprintln!(
            "{}: a Cluster of unknown size: exiftool checked for Title only",
            path.display()
        );
    }
    if let Some(x) = exiftool_tags(path).filter(|_| !wav) {
        let all = [("Title", WANT[0].1), ("Artist", WANT[1].1), ("Album", WANT[2].1)];
        for (k, v) in all.into_iter().take(if cut_short { 1 } else { 3 }) {
            assert_eq!(
                x.get(k).and_then(|v| v.as_str()),
                Some(v),
                "exiftool: {}: {k}",
                path.display()
            );
        }
    }
}

/// Edits every file of `family` whose name ends with one of `exts`: in
/// place, then past the padding (a copy renamed over it), and from a
/// second copy of the original into another file. Returns how many files
/// were edited and how many of those edits were in place.
fn round_trip(family: &str, exts: &[&str]) -> (usize, usize) {
    let dir = scratch(family);
    let (mut edited, mut in_place) = (0, 0);
    for (name, f) in named_files(family, exts) {
        let Some((pk, ranges)) = packets(&f) else {
            eprintln!("{name}: our reader does not open it; not edited");
            continue;
        };
        let orig = std::fs::read(&f).unwrap();
        let work = dir.join(&name);
        std::fs::write(&work, &orig).unwrap();
        let mut before = Before {
            packets: pk,
            ours: our_tags(&work),
            ffprobe: ffprobe_tags(&work),
            streams: ffprobe_stream_tags(&work).filter(|_| is_matroska(&work)),
        };
        if let Some(&(_, key)) = NEWLY_SEEN.iter().find(|(n, _)| *n == name) {
            eprintln!("{name}: its old Tags are seen once moved: {key} and stream tags not compared");
            before.streams = None;
            before.ours.remove(key);
            if let Some(ff) = before.ffprobe.as_mut() {
                ff.remove(key);
            }
        }
        let r = match edit(&work, &edits(), None) {
            Ok(r) => r,
            Err(e) => {
                assert_eq!(
                    std::fs::read(&work).unwrap(),
                    orig,
                    "{name}: a failed edit changed the file"
                );
                eprintln!("{name}: refused: {e}");
                continue;
            }
        };
        verify(&work, &before);
        let now = std::fs::read(&work).unwrap();
        if r.mode != EditMode::Copy {
            in_place += 1;
            // Extended: the file grew by a tag at its end (Matroska).
            if r.mode == EditMode::InPlace {
                assert_eq!(now.len(), orig.len(), "{name}: in place changed the length");
            } else {
                assert!(now.len() > orig.len(), "{name}: extended but not longer");
            }
            // No more bytes differ than were written, and none of a packet.
            let diff = differing(&orig, &now[..orig.len()]);
            assert!(
                diff.len() as u64 <= r.bytes_written,
                "{name}: more differs than was written"
            );
            let hit = |&(a, b): &(u64, u64)| diff.iter().any(|&i| (a..b).contains(&(i as u64)));
            assert!(!ranges.iter().any(hit), "{name}: in place wrote into a packet");
            assert!(
                r.bytes_written < 65_536,
                "{name}: {} bytes written in place",
                r.bytes_written
            );
        } else {
            assert_eq!(r.bytes_written, now.len() as u64, "{name}: a copy's bytes");
        }
        // Past any padding (a comment longer than the file): a copy renamed
        // over the input.
        let long = Edits {
            set: vec![("comment".into(), "x".repeat(orig.len().max(70_000)))],
            remove: Vec::new(),
            ..Edits::default()
        };
        let r = edit(&work, &long, None).unwrap();
        assert_ne!(
            r.mode,
            EditMode::InPlace,
            "{name}: a comment longer than the file fitted"
        );
        let mut without_comment = before.clone();
        without_comment.ours.remove("comment");
        if let Some(ff) = without_comment.ffprobe.as_mut() {
            ff.remove("comment");
        }
        verify(&work, &without_comment);
        // Our MP3 reader lists text frames only (not COMM): ffprobe reads it.
        if before.ffprobe.is_some() {
            let ff = ffprobe_tags(&work).unwrap_or_default();
            let comment = ff.get("comment").and_then(|c| c.as_str()).unwrap_or("");
            assert!(comment.starts_with("xxxx"), "{name}: the long comment is not read back");
        }
        // From an untouched copy into another file: the input stays as it was.
        let out = edit_into_another(&dir, &name, &orig);
        verify(&out, &before);
        edited += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{family}: {edited} files edited, {in_place} of them in place first");
    (edited, in_place)
}

#[test]
fn flac_round_trip() {
    let (edited, in_place) = round_trip("flac", &[".flac"]);
    // The corpus's two files, and the samples when present (21 files, of
    // which a few are refused by our reader or the editor).
    let want = if samples().join("flac").is_dir() { 15 } else { 2 };
    assert!(edited >= want, "only {edited} FLAC files edited");
    assert!(in_place >= 1, "no FLAC edit was in place");
}

#[test]
fn mp3_round_trip() {
    let (edited, in_place) = round_trip("mp3", &[".mp3", ".mp2", ".mp1"]);
    // The corpus's three files (one without an ID3v2 tag), and the
    // samples when present (21 files; a few are refused).
    let want = if samples().join("mp3").is_dir() { 12 } else { 3 };
    assert!(edited >= want, "only {edited} MP3 files edited");
    assert!(in_place >= 1, "no MP3 edit was in place");
}

#[test]
fn mp4_round_trip() {
    let (edited, in_place) = round_trip("mp4", &[".mp4", ".m4a", ".m4v", ".mov", ".3gp"]);
    // The corpus's ten files (the fragmented one is refused: its moov would
    // grow before fragments with absolute offsets), and the samples.
    let want = if samples().join("mp4").is_dir() { 20 } else { 9 };
    assert!(edited >= want, "only {edited} MP4 files edited");
    assert!(in_place >= 1, "no MP4 edit was in place");
}

#[test]
fn matroska_round_trip() {
    let (edited, in_place) = round_trip("matroska", &[".mkv", ".mka", ".webm"]);
    // The corpus's five files (in place or with the Tags appended); of the
    // 40 samples, three are refused (two truncated, one with a cut element
    // header at its end), and those without room for a longer Info are
    // copied with their Clusters moved (docs/tags.md).
    let samples = samples().join("matroska").is_dir();
    let (want, want_in_place) = if samples { (42, 35) } else { (5, 5) };
    assert!(edited >= want, "only {edited} Matroska files edited");
    assert!(
        in_place >= want_in_place,
        "only {in_place} Matroska edits in place first"
    );
}

/// An EBML element header at `at` of `b`: ID (marker kept), data start,
/// data size (`None`: unknown).
fn ebml_header(b: &[u8], at: usize) -> (u64, usize, Option<u64>) {
    let vint = |i: usize| {
        let n = b[i].leading_zeros() as usize + 1;
        let raw = b[i..i + n].iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
        (raw, n)
    };
    let (id, n) = vint(at);
    let (raw, m) = vint(at + n);
    let mask = (1u64 << (7 * m)) - 1;
    let size = raw & mask;
    (id, at + n + m, (size != mask).then_some(size))
}

/// The children of the element whose data is `b[from..to]`.
fn ebml_children(b: &[u8], from: usize, to: usize) -> Vec<(u64, usize, usize)> {
    let mut out = Vec::new();
    let mut at = from;
    while at < to {
        let (id, data, size) = ebml_header(b, at);
        let end = data + size.unwrap() as usize;
        out.push((id, data, end));
        at = end;
    }
    out
}

/// Every SeekHead entry of the file points at an element of its ID, and
/// every CueClusterPosition at a Cluster (both relative to the Segment's
/// data, RFC 9559 §5.1.1.1.2 and §5.1.5.1.2.2).
fn matroska_index_ok(path: &Path) {
    let b = std::fs::read(path).unwrap();
    let (_, data, size) = ebml_header(&b, 0);
    let (_, seg, seg_size) = ebml_header(&b, data + size.unwrap() as usize);
    let end = seg_size.map_or(b.len(), |s| seg + s as usize);
    let id_at = |rel: u64| ebml_header(&b, seg + rel as usize).0;
    let uint = |from: usize, to: usize| b[from..to].iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
    let mut at = seg;
    while at < end {
        let (id, data, size) = ebml_header(&b, at);
        let Some(size) = size else { break };
        let data_end = data + size as usize;
        if id == 0x114D_9B74 {
            for (_, sd, se) in ebml_children(&b, data, data_end).into_iter().filter(|c| c.0 == 0x4DBB) {
                let kids = ebml_children(&b, sd, se);
                let get = |want| kids.iter().find(|k| k.0 == want).map(|k| uint(k.1, k.2)).unwrap();
                assert_eq!(id_at(get(0x53AC)), get(0x53AB), "{}: a SeekHead entry", path.display());
            }
        }
        if id == 0x1C53_BB6B {
            for (_, pd, pe) in ebml_children(&b, data, data_end).into_iter().filter(|c| c.0 == 0xBB) {
                for (_, td, te) in ebml_children(&b, pd, pe).into_iter().filter(|c| c.0 == 0xB7) {
                    for (_, xd, xe) in ebml_children(&b, td, te).into_iter().filter(|c| c.0 == 0xF1) {
                        assert_eq!(
                            id_at(uint(xd, xe)),
                            0x1F43_B675,
                            "{}: a CueClusterPosition",
                            path.display()
                        );
                    }
                }
            }
        }
        at = data_end;
    }
}

#[test]
fn ogg_round_trip() {
    // Vorbis and Opus: always a copy (the header pages are laid out anew;
    // the 70 kB comment takes more pages, so every later page is
    // renumbered). Refused: FLAC and Speex in Ogg, a sample whose headers
    // come again after its comment, and one with a gap after its first
    // page.
    let (edited, _) = round_trip("ogg", &[".ogg", ".oga", ".opus"]);
    let want = if samples().join("ogg").is_dir() { 8 } else { 2 };
    assert!(edited >= want, "only {edited} Ogg files edited");
}

/// Every page of the Ogg file has a right CRC, and each stream's sequence
/// numbers go up by one (RFC 3533 §6); the pages fill the file.
fn ogg_pages_ok(path: &Path) {
    let b = std::fs::read(path).unwrap();
    let mut last: Vec<(u32, u32)> = Vec::new();
    let mut at = 0;
    while at < b.len() {
        assert_eq!(&b[at..at + 4], b"OggS", "{}: no page at {at}", path.display());
        let n = b[at + 26] as usize;
        let len = 27 + n + b[at + 27..at + 27 + n].iter().map(|&l| l as usize).sum::<usize>();
        let mut page = b[at..at + len].to_vec();
        let stored = u32::from_le_bytes(page[22..26].try_into().unwrap());
        page[22..26].fill(0);
        let crc = mediaslice::crc::crc32_poly04c11db7(0, &page);
        assert_eq!(crc, stored, "{}: the CRC of the page at {at}", path.display());
        let serial = u32::from_le_bytes(page[14..18].try_into().unwrap());
        let seq = u32::from_le_bytes(page[18..22].try_into().unwrap());
        match last.iter_mut().find(|(s, _)| *s == serial) {
            Some((_, prev)) => {
                assert_eq!(seq, *prev + 1, "{}: the sequence at {at}", path.display());
                *prev = seq;
            }
            None => last.push((serial, seq)),
        }
        at += len;
    }
}

/// `mkvmerge --identify` reads the file without an error (exit 0, or 1
/// for warnings); skipped with a message when mkvmerge is missing.
fn mkvmerge_accepts(path: &Path) {
    match std::process::Command::new("mkvmerge")
        .arg("--identify")
        .arg(path)
        .output()
    {
        Ok(o) => assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "mkvmerge --identify {}: {}",
            path.display(),
            String::from_utf8_lossy(&o.stdout)
        ),
        Err(_) => eprintln!("mkvmerge missing: {} not checked by it", path.display()),
    }
}

#[test]
fn aiff_round_trip() {
    let (edited, _) = round_trip("aiff", &[".aiff", ".aif", ".aifc"]);
    // The corpus's five files, and the samples' four our reader opens.
    let want = if samples().join("aiff").is_dir() { 9 } else { 5 };
    assert!(edited >= want, "only {edited} AIFF files edited");
}

#[test]
fn wav_round_trip() {
    let (edited, _) = round_trip("wav", &[".wav"]);
    let want = if samples().join("wav").is_dir() { 15 } else { 8 };
    assert!(edited >= want, "only {edited} WAV files edited");
    // The list outgrows its place and the chunks end the file: it is
    // appended with a JUNK chunk after it, and the next edit is in place.
    let dir = scratch("wav-in-place");
    let f = dir.join("a.wav");
    std::fs::copy(corpus("wav/info_tags.wav"), &f).unwrap();
    let (pk, _) = packets(&f).unwrap();
    let orig_len = std::fs::metadata(&f).unwrap().len();
    let r = edit(&f, &edits(), None).unwrap();
    assert_eq!(r.mode, EditMode::Extended);
    let len = std::fs::metadata(&f).unwrap().len();
    assert_eq!(
        len - orig_len,
        r.bytes_written - 8,
        "the tail, the RIFF size and the old list made JUNK"
    );
    let mut again = edits();
    again.set[0].1 = "Second title".into();
    let r = edit(&f, &again, None).unwrap();
    assert_eq!(r.mode, EditMode::InPlace);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), len);
    assert_eq!(packets(&f).unwrap().0, pk);
    assert_eq!(our_tags(&f).get("title").and_then(|v| v.as_str()), Some("Second title"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// RF64 (EBU Tech 3306), made by ffmpeg (`-rf64 always`): the INFO list
/// appended after `data` with the `ds64` RIFF size patched, then edited
/// in place, then copied; ffprobe and our reader see the tags, the
/// packets never change.
#[test]
fn rf64_append_in_place_and_copy() {
    let dir = scratch("rf64");
    let f = dir.join("a.wav");
    let made = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=2:sample_rate=8000"])
        .args(["-metadata", "comment=kept", "-rf64", "always"])
        .arg(&f)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("rf64_append_in_place_and_copy: SKIPPED, ffmpeg cannot make an RF64 file here");
        return;
    }
    assert_eq!(&std::fs::read(&f).unwrap()[..4], b"RF64");
    let (pk, _) = packets(&f).unwrap();
    let before = our_tags(&f);
    let r = edit(&f, &edits(), None).unwrap();
    assert_eq!((r.format, r.mode), ("rf64", EditMode::Extended));
    // The ds64 RIFF size covers the file again.
    let b = std::fs::read(&f).unwrap();
    assert_eq!(u64::from_le_bytes(b[20..28].try_into().unwrap()), b.len() as u64 - 8);
    assert_eq!(packets(&f).unwrap().0, pk);
    check_tags("mediaslice", &f, &before, &our_tags(&f), &WANT);
    if let Some(ff) = ffprobe_tags(&f) {
        assert_eq!(
            ff.get("title").and_then(|v| v.as_str()),
            Some(WANT[0].1),
            "ffprobe: {ff:?}"
        );
        assert_eq!(
            ff.get("comment").and_then(|v| v.as_str()),
            Some("kept"),
            "ffprobe: {ff:?}"
        );
    }
    let mut again = edits();
    again.set[0].1 = "Second title".into();
    let r = edit(&f, &again, None).unwrap();
    assert_eq!(r.mode, EditMode::InPlace);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), b.len() as u64);
    assert_eq!(our_tags(&f).get("title").and_then(|v| v.as_str()), Some("Second title"));
    let out = dir.join("out.wav");
    let r = edit(&f, &edits(), Some(&out)).unwrap();
    assert_eq!(r.mode, EditMode::Copy);
    let o = std::fs::read(&out).unwrap();
    assert_eq!(&o[..4], b"RF64");
    assert_eq!(u64::from_le_bytes(o[20..28].try_into().unwrap()), o.len() as u64 - 8);
    assert_eq!(packets(&out).unwrap().0, pk);
    assert_eq!(our_tags(&out).get("title").and_then(|v| v.as_str()), Some(WANT[0].1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failures_leave_the_input_intact() {
    let dir = scratch("failures");
    let flac = std::fs::read(corpus("flac/s16_stereo.flac")).unwrap();
    // Output folder missing.
    let f = dir.join("a.flac");
    std::fs::write(&f, &flac).unwrap();
    assert_refused(&f, Some(&dir.join("no-such-folder/out.flac")));
    // A VORBIS_COMMENT whose comment count runs past its block.
    let vc = find_block(&flac, 4).expect("corpus FLAC has a VORBIS_COMMENT");
    let mut bad = flac.clone();
    let vendor_len = u32::from_le_bytes(bad[vc + 4..vc + 8].try_into().unwrap()) as usize;
    bad[vc + 8 + vendor_len..vc + 12 + vendor_len].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&f, &bad).unwrap();
    assert_refused(&f, None);
    assert_refused(&f, Some(&dir.join("out.flac")));
    // A metadata block longer than the file.
    let mut bad = flac.clone();
    bad[vc + 1..vc + 4].copy_from_slice(&[0xff, 0xff, 0xff]);
    bad.truncate(vc + 100);
    std::fs::write(&f, &bad).unwrap();
    assert_refused(&f, None);
    // An MP4 item whose size runs past its ilst; an MP4 cut inside mdat.
    let mp4 = std::fs::read(corpus("mp4/h264_aac_tags.mp4")).unwrap();
    let ilst = mp4
        .windows(4)
        .position(|w| w == b"ilst")
        .expect("corpus MP4 has an ilst")
        + 4;
    let mut bad = mp4.clone();
    bad[ilst..ilst + 4].copy_from_slice(&0xffff_fff0u32.to_be_bytes());
    let f = dir.join("a.mp4");
    std::fs::write(&f, &bad).unwrap();
    assert_refused(&f, None);
    std::fs::write(&f, &mp4[..mp4.len() - 1000]).unwrap();
    assert_refused(&f, None);
    assert_refused(&f, Some(&dir.join("out.mp4")));
    // Not a format the editor writes.
    let f = dir.join("a.w64");
    std::fs::copy(corpus("wav/pcm_s16le.w64"), &f).unwrap();
    assert_refused(&f, None);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_matroska_and_ogg_never_panic() {
    let corpus_files = ["matroska", "ogg"]
        .into_iter()
        .flat_map(|fam| files(fam).into_iter().filter(move |f| f.starts_with(corpus(fam))));
    damage_never_panics("mkv-damaged", corpus_files);
}

/// Sets the EBML size at `at` to "unknown" (all value bits set), or to
/// the largest known size of its width (RFC 8794 §6).
fn huge_size(b: &mut [u8], at: usize, unknown: bool) {
    let width = b[at].leading_zeros() as usize + 1;
    b[at] = 0xFF >> (width - 1);
    b[at + 1..at + width].fill(0xFF);
    if !unknown {
        b[at + width - 1] ^= 1;
    }
}

/// Where the `n`-th (from 0) copy of `needle` is in `b`.
fn nth(b: &[u8], needle: &[u8], n: usize) -> usize {
    b.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .nth(n)
        .unwrap_or_else(|| panic!("{needle:02X?} #{n} not found"))
        .0
}

#[test]
fn malformed_matroska_is_refused() {
    let dir = scratch("mkv-bad");
    let mkv = std::fs::read(corpus("matroska/h264_aac.mkv")).unwrap();
    let f = dir.join("a.mkv");
    // The first copy of each ID is its SeekHead entry; the second, the
    // element. Tags' size field: 8 bytes in ffmpeg's files.
    let tags = nth(&mkv, &[0x12, 0x54, 0xC3, 0x67], 1);
    // A Tags of unknown size (RFC 8794 §6.2): not allowed for Tags.
    let mut bad = mkv.clone();
    huge_size(&mut bad, tags + 4, true);
    std::fs::write(&f, &bad).unwrap();
    assert_refused(&f, None);
    // A Tag's size made 126: the children of Tags no longer line up, and
    // one runs past the Tags.
    let mut bad = mkv.clone();
    let tag = tags + 5 + nth(&mkv[tags + 5..], &[0x73, 0x73], 0);
    huge_size(&mut bad, tag + 2, false);
    std::fs::write(&f, &bad).unwrap();
    assert_refused(&f, None);
    assert_refused(&f, Some(&dir.join("out.mkv")));
    // Two Info elements: the Tracks ID made an Info ID.
    let mut bad = mkv.clone();
    let tracks = nth(&mkv, &[0x16, 0x54, 0xAE, 0x6B], 1);
    bad[tracks..tracks + 4].copy_from_slice(&[0x15, 0x49, 0xA9, 0x66]);
    std::fs::write(&f, &bad).unwrap();
    assert_refused(&f, None);
    // A top-level element past the Segment's end (a Cues size too large).
    let mut bad = mkv.clone();
    let cues = nth(&mkv, &[0x1C, 0x53, 0xBB, 0x6B], 1);
    huge_size(&mut bad, cues + 4, false);
    std::fs::write(&f, &bad).unwrap();
    assert_refused(&f, None);
    // Truncated: the Segment runs past the end of the file.
    std::fs::write(&f, &mkv[..mkv.len() - 100]).unwrap();
    assert_refused(&f, None);
    // An EBML header that ends past the end of the file (found by the
    // tagedit_roundtrip fuzz target: the Segment's header was then looked
    // for past the end, and the length to read underflowed).
    let mut bad = mkv.clone();
    huge_size(&mut bad, 4, false);
    std::fs::write(&f, &bad[..40]).unwrap();
    assert_refused(&f, None);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether the Matroska file at `path` has a Cluster whose size is unknown
/// (a size of all ones, in any of its 1 to 8 byte forms, RFC 9559 §6.2).
fn unknown_size_cluster(path: &Path) -> bool {
    let b = std::fs::read(path).unwrap_or_default();
    const ID: [u8; 4] = [0x1F, 0x43, 0xB6, 0x75];
    b.windows(12).any(|w| {
        let Some(len) = (w[..4] == ID && w[4] != 0).then(|| w[4].leading_zeros() as usize + 1) else {
            return false;
        };
        w[4] == (0xFFu8 >> (len - 1)) && w[5..4 + len].iter().all(|&x| x == 0xFF)
    })
}

/// An EBML element: ID bytes, a size (one byte up to 126, else eight),
/// the data.
fn ebml_element(id: &[u8], data: &[u8]) -> Vec<u8> {
    let size = if data.len() < 127 {
        vec![0x80 | data.len() as u8]
    } else {
        (data.len() as u64 | 1 << 56).to_be_bytes().to_vec()
    };
    [id, &size, data].concat()
}

const TAGS_ID: [u8; 4] = [0x12, 0x54, 0xC3, 0x67];

/// A Tags element with one file-level Tag of the SimpleTags `pairs`.
fn file_level_tags(pairs: &[(&str, &str)]) -> Vec<u8> {
    let mut tag = ebml_element(&[0x63, 0xC0], &[]);
    for (n, v) in pairs {
        let simple = [
            ebml_element(&[0x45, 0xA3], n.as_bytes()),
            ebml_element(&[0x44, 0x87], v.as_bytes()),
        ]
        .concat();
        tag.extend(ebml_element(&[0x67, 0xC8], &simple));
    }
    ebml_element(&TAGS_ID, &ebml_element(&[0x73, 0x73], &tag))
}

/// `orig` (a Matroska file whose Segment starts with a SeekHead and a
/// `Void`, as ffmpeg writes it) with a second Tags, `tags`, at the end of
/// the Segment, listed by a new Seek that the SeekHead takes from the
/// `Void` (its CRC-32 recomputed): a file with two Tags elements, as some
/// muxers write one (RFC 9559 §5.1.8 allows several). `None` for another
/// layout.
fn with_second_tags(orig: &[u8], tags: &[u8]) -> Option<Vec<u8>> {
    let (_, data, size) = ebml_header(orig, 0);
    let seg = data + size? as usize;
    let (seg_id, seg_data, seg_size) = ebml_header(orig, seg);
    let seg_end = seg_size.map_or(orig.len(), |s| seg_data + s as usize);
    let (sh_id, sh_data, sh_size) = ebml_header(orig, seg_data);
    let sh_end = sh_data + sh_size? as usize;
    let (void_id, void_data, void_size) = ebml_header(orig, sh_end);
    if seg_id != 0x1853_8067 || sh_id != 0x114D_9B74 || void_id != 0xEC || seg_end != orig.len() {
        return None;
    }
    let void_end = void_data + void_size? as usize;
    let pos = (seg_end - seg_data) as u64;
    let seek = ebml_element(
        &[0x4D, 0xBB],
        &[
            ebml_element(&[0x53, 0xAB], &TAGS_ID),
            ebml_element(&[0x53, 0xAC], &pos.to_be_bytes()),
        ]
        .concat(),
    );
    let mut kids = [&orig[sh_data..sh_end], &seek].concat();
    if kids.starts_with(&[0xBF, 0x84]) {
        let crc = mediaslice::crc::crc32(&kids[6..]);
        kids[2..6].copy_from_slice(&crc.to_le_bytes());
    }
    let head = ebml_element(&[0x11, 0x4D, 0x9B, 0x74], &kids);
    let rest = (void_end - seg_data).checked_sub(head.len())?;
    if !(2..=128).contains(&rest) {
        return None;
    }
    let mut out = orig[..seg_data].to_vec();
    out.extend(&head);
    out.extend([0xEC, 0x80 | (rest - 2) as u8]);
    out.resize(out.len() + rest - 2, 0);
    out.extend(&orig[void_end..]);
    out.extend(tags);
    if let Some(s) = seg_size {
        let width = seg_data - seg - 4;
        let v = (s + tags.len() as u64) | 1 << (7 * width);
        out[seg + 4..seg_data].copy_from_slice(&v.to_be_bytes()[8 - width..]);
    }
    Some(out)
}

/// Every Tags element of the Segment has a SeekHead entry at its own
/// position (the files of [`matroska_several_tags`] list each). Returns
/// how many Tags elements there are.
fn every_tags_listed(path: &Path) -> usize {
    let b = std::fs::read(path).unwrap();
    let (_, data, size) = ebml_header(&b, 0);
    let (_, seg, seg_size) = ebml_header(&b, data + size.unwrap() as usize);
    let end = seg_size.map_or(b.len(), |s| seg + s as usize);
    let uint = |from: usize, to: usize| b[from..to].iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
    let (mut tags, mut listed) = (Vec::new(), Vec::new());
    let mut at = seg;
    while at < end {
        let (id, data, size) = ebml_header(&b, at);
        let data_end = size.map_or(end, |s| data + s as usize);
        if id == 0x1254_C367 {
            tags.push((at - seg) as u64);
        }
        if id == 0x114D_9B74 {
            for (_, sd, se) in ebml_children(&b, data, data_end).into_iter().filter(|c| c.0 == 0x4DBB) {
                let kids = ebml_children(&b, sd, se);
                let get = |want| kids.iter().find(|k| k.0 == want).map(|k| uint(k.1, k.2)).unwrap();
                if get(0x53AB) == 0x1254_C367 {
                    listed.push(get(0x53AC));
                }
            }
        }
        if size.is_none() {
            // An unknown-size Cluster: step over its children.
            at = data;
            while at < end && !matches!(ebml_header(&b, at).0, 0x1F43_B675 | 0x1254_C367 | 0x1C53_BB6B) {
                let (_, d, s) = ebml_header(&b, at);
                at = d + s.unwrap() as usize;
            }
            continue;
        }
        at = data_end;
    }
    listed.sort_unstable();
    assert_eq!(listed, tags, "{}: the Tags elements the SeekHead lists", path.display());
    tags.len()
}

/// A Matroska file with two Tags elements (the corpus's files with a
/// second one appended, as some muxers write it): set, removed and moved
/// fields change only where they are, every other tag (the second Tags'
/// `LABEL`, the first one's track tags) is kept, both readers and
/// mkvmerge read the result, and each Tags left stays listed in the
/// SeekHead. Removing every field of the second Tags removes it (a Tags
/// holds at least one Tag): its entry goes, the first one's stays (a
/// SeekHead entry is told by its ID and position).
#[test]
fn matroska_several_tags() {
    let dir = scratch("several-tags");
    let second = file_level_tags(&[("ALBUM", "second album"), ("LABEL", "kept label")]);
    let mut built = 0;
    for (name, f) in named_files("matroska", &[".mkv", ".mka", ".webm"]) {
        if !f.starts_with(corpus("")) {
            continue;
        }
        let Some(two) = with_second_tags(&std::fs::read(&f).unwrap(), &second) else {
            eprintln!("{name}: no SeekHead and Void to list a second Tags in; skipped");
            continue;
        };
        built += 1;
        let work = dir.join(&name);
        std::fs::write(&work, &two).unwrap();
        assert_eq!(every_tags_listed(&work), 2);
        let (packets_before, _) = packets(&work).unwrap();
        let before = Before {
            packets: packets_before,
            ours: our_tags(&work),
            ffprobe: ffprobe_tags(&work),
            streams: ffprobe_stream_tags(&work),
        };
        assert_eq!(
            before.ours.get("LABEL").and_then(|v| v.as_str()),
            Some("kept label"),
            "{name}: our reader sees the second Tags"
        );
        if let Some(ff) = &before.ffprobe {
            assert_eq!(ff.get("album").and_then(|v| v.as_str()), Some("second album"));
        }
        // 1. Title, artist, album (in the second Tags), date.
        let r = edit(&work, &edits(), None).unwrap();
        assert_ne!(r.mode, EditMode::Copy, "{name}: room was there");
        verify(&work, &before);
        every_tags_listed(&work);
        // 2. A comment longer than the file: extended or moved.
        let long = Edits {
            set: vec![("comment".into(), "x".repeat(two.len().max(70_000)))],
            ..Edits::default()
        };
        edit(&work, &long, None).unwrap();
        let mut without_comment = before.clone();
        without_comment.ours.remove("comment");
        if let Some(ff) = without_comment.ffprobe.as_mut() {
            ff.remove("comment");
        }
        verify(&work, &without_comment);
        every_tags_listed(&work);
        // 3. Into another file.
        verify(&edit_into_another(&dir, &name, &two), &before);
        // 4. The second Tags emptied: removed, the first still listed.
        std::fs::write(&work, &two).unwrap();
        let empty = Edits {
            remove: vec!["album".into(), "label".into()],
            ..Edits::default()
        };
        edit(&work, &empty, None).unwrap();
        assert_eq!(every_tags_listed(&work), 1, "{name}: the emptied Tags is still there");
        mkvmerge_accepts(&work);
        matroska_index_ok(&work);
        assert_eq!(packets(&work).unwrap().0, before.packets, "{name}: packets changed");
        let mut gone = before.clone();
        for m in [Some(&mut gone.ours), gone.ffprobe.as_mut()].into_iter().flatten() {
            m.remove("album");
            m.remove("ALBUM");
            m.remove("label");
            m.remove("LABEL");
        }
        assert_eq!(our_tags(&work), gone.ours, "{name}: our reader after the removal");
        if let Some(ff) = &gone.ffprobe {
            assert_eq!(
                ffprobe_tags(&work).as_ref(),
                Some(ff),
                "{name}: ffprobe after the removal"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(built >= 4, "only {built} corpus files took a second Tags");
}

/// Where the FLAC metadata block of `kind` starts (its header).
fn find_block(flac: &[u8], kind: u8) -> Option<usize> {
    let mut at = 4;
    loop {
        let h = flac.get(at..at + 4)?;
        if h[0] & 0x7f == kind {
            return Some(at);
        }
        if h[0] & 0x80 != 0 {
            return None;
        }
        at += 4 + (u32::from_be_bytes([0, h[1], h[2], h[3]]) as usize);
    }
}
