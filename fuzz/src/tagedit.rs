//! The tag-editing target: arbitrary bytes as a file whose tags
//! `mediaslice_std::tagedit::edit` sets (title, artist, album) and removes
//! (comment), through a file in a scratch folder (the editor works on
//! files: positioned writes, a temporary file renamed at the end).
//!
//! Invariants (docs/fuzzing.md):
//! * no panic;
//! * an edit into another file (`-o`) leaves the input byte-identical;
//! * a failed edit leaves the input byte-identical and no output file;
//! * an edit that succeeds gives a file that opens when the input opened,
//!   as the same format, whose packets (track, pts, dts, size, CRC-32 of
//!   the data, the first [`PACKET_CAP`]) are the input's, and which ends
//!   its packets the same way (cleanly or with an error).
//!
//! One exception: a packet flagged `truncated` (cut by the end of the
//! input) is compared by track and times only. Its bytes run to the end
//! of the file, so they include whatever the edit owns there (an MP3's
//! ID3v1 block, kept in step with the title; an MP4's `moov` after a
//! sample that claims to run past `mdat`), and its size follows the
//! file's length (two fuzzing finds, both as ffmpeg would read them).
//!
//! The last input byte picks the mode: bit 0 in place (no `-o`), else
//! into another file.

use super::*;
use mediaslice_std::tagedit::{edit, Edits};
use std::path::{Path, PathBuf};

/// Packets compared at most.
pub const PACKET_CAP: usize = 20_000;

/// One packet as compared: track, pts, dts, size, CRC-32 of the data.
type Key = (usize, Option<i64>, Option<i64>, usize, u32);

/// The scratch folder of this process (on a memory file system when there
/// is one).
fn folder() -> PathBuf {
    let base = Path::new("/dev/shm");
    let base = if base.is_dir() {
        base.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let d = base.join(format!("mediaslice-fuzz-tagedit-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&d);
    d
}

/// The edits every case makes.
fn edits() -> Edits {
    Edits {
        set: vec![
            ("title".into(), "Fuzz tïtle ✓".into()),
            ("artist".into(), "Ärtist".into()),
            ("album".into(), "An album".into()),
        ],
        remove: vec!["comment".into()],
        ..Edits::default()
    }
}

/// The format and the packets of `data` (and whether they ended with an
/// error), or `None` when it does not open.
fn packets(data: &[u8]) -> Option<(FormatKind, Vec<Key>, bool)> {
    let mut sc = scratch(data.len());
    let mut d = Demuxer::open_with(SliceSource::with_scratch(data, &mut sc), None, Limits::default()).ok()?;
    let kind = d.format();
    let mut v = Vec::new();
    let mut error = false;
    while v.len() < PACKET_CAP {
        match d.next_packet() {
            // A cut packet's size and bytes are not compared (see the
            // module notes).
            Ok(Some(p)) if p.flags.truncated => v.push((p.track, p.pts, p.dts, 0, 0)),
            Ok(Some(p)) => v.push((p.track, p.pts, p.dts, p.data.len(), crc32(p.data))),
            Ok(None) => break,
            Err(_) => {
                error = true;
                break;
            }
        }
    }
    Some((kind, v, error))
}

/// Runs one case (see the module notes).
pub fn run_tagedit(data: &[u8]) {
    let in_place = data.last().is_some_and(|b| b & 1 == 1);
    // The name's extension is a hint to detection: the one of the format
    // the bytes look like.
    let ext = match detect(&data[..data.len().min(mediaslice::detect::DETECT_BYTES)], None) {
        Some(FormatKind::Mp4) => "mp4",
        Some(FormatKind::Matroska) => "mkv",
        Some(FormatKind::Mp3) => "mp3",
        Some(FormatKind::Flac) => "flac",
        Some(FormatKind::Ogg) => "ogg",
        Some(FormatKind::Wav | FormatKind::Rf64) => "wav",
        Some(FormatKind::Aiff) => "aiff",
        Some(FormatKind::Asf) => "wma",
        _ => "bin",
    };
    let dir = folder();
    let input = dir.join(format!("in.{ext}"));
    let output = dir.join(format!("out.{ext}"));
    let _ = std::fs::remove_file(&output);
    if std::fs::write(&input, data).is_err() {
        return;
    }
    let result = edit(&input, &edits(), (!in_place).then_some(output.as_path()));
    let now = std::fs::read(&input).unwrap_or_default();
    let written = match result {
        Err(_) => {
            assert!(now == data, "invariant: a failed edit changed the input");
            assert!(!output.exists(), "invariant: a failed edit left an output file");
            return;
        }
        Ok(_) if in_place => now,
        Ok(_) => {
            assert!(now == data, "invariant: an edit into another file changed the input");
            std::fs::read(&output).unwrap_or_default()
        }
    };
    let Some((kind, before, before_error)) = packets(data) else {
        return;
    };
    let Some((kind_after, after, after_error)) = packets(&written) else {
        panic!("invariant: the edited {kind:?} file no longer opens");
    };
    assert_eq!(kind_after, kind, "invariant: the edited file opens as another format");
    assert_eq!(
        before.len(),
        after.len(),
        "invariant: the edit changed the packet count ({kind:?})"
    );
    for (i, (a, b)) in before.iter().zip(&after).enumerate() {
        assert_eq!(a, b, "invariant: the edit changed packet {i} ({kind:?})");
    }
    assert_eq!(
        before_error, after_error,
        "invariant: the edit changed how the packets end ({kind:?})"
    );
}
