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
//! One exception: when either file has a packet flagged `truncated` (cut
//! by the end of the input) or, for MP4, a sample not wholly inside a
//! top-level `mdat` box, only the format is compared. Such packets hold
//! bytes the edit owns (an MP3's ID3v1 block kept in step with the title,
//! the `moov` a damaged sample table points into), their size follows the
//! file's length, and which samples an MP4 reader reaches before the cut
//! does too (four fuzzing finds, each read as ffmpeg reads it; see
//! docs/fuzzing.md).
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

/// The bodies of the top-level `mdat` boxes of an MP4 `data` (ISO/IEC
/// 14496-12 §4.2: 32-bit size, 1 for a 64-bit one after the type, 0 to
/// the end).
fn mdats(data: &[u8]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while let Some(h) = data.get(at..at + 8) {
        let small = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as u64;
        let (size, head) = match small {
            0 => ((data.len() - at) as u64, 8),
            1 => match data.get(at + 8..at + 16) {
                Some(b) => (u64::from_be_bytes(b.try_into().unwrap_or_default()), 16),
                None => break,
            },
            n => (n, 8),
        };
        if size < head {
            break;
        }
        let end = (at as u64).saturating_add(size);
        if &h[4..8] == b"mdat" {
            out.push((at as u64 + head, end));
        }
        match usize::try_from(end) {
            Ok(e) if e > at => at = e,
            _ => break,
        }
    }
    out
}

/// What a file gives: its format, its packets, whether they ended with an
/// error, and whether one was cut or outside `mdat` (see the module notes).
struct Read {
    kind: FormatKind,
    packets: Vec<Key>,
    error: bool,
    unstable: bool,
}

/// What `data` gives, or `None` when it does not open.
fn packets(data: &[u8]) -> Option<Read> {
    let mut sc = scratch(data.len());
    let mut d = Demuxer::open_with(SliceSource::with_scratch(data, &mut sc), None, Limits::default()).ok()?;
    let kind = d.format();
    let mdat = if kind == FormatKind::Mp4 {
        Some(mdats(data))
    } else {
        None
    };
    let mut v = Vec::new();
    let mut error = false;
    let mut unstable = false;
    while v.len() < PACKET_CAP {
        match d.next_packet() {
            Ok(Some(p)) => {
                let outside = |m: &Vec<(u64, u64)>| {
                    let (a, b) = (p.pos.unwrap_or(u64::MAX), p.pos.unwrap_or(0) + p.data.len() as u64);
                    !m.iter().any(|&(s, e)| s <= a && b <= e)
                };
                unstable |= p.flags.truncated || mdat.as_ref().is_some_and(outside);
                v.push((p.track, p.pts, p.dts, p.data.len(), crc32(p.data)))
            }
            Ok(None) => break,
            Err(_) => {
                error = true;
                break;
            }
        }
    }
    Some(Read {
        kind,
        packets: v,
        error,
        unstable,
    })
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
    let Some(before) = packets(data) else {
        return;
    };
    let kind = before.kind;
    let Some(after) = packets(&written) else {
        panic!("invariant: the edited {kind:?} file no longer opens");
    };
    assert_eq!(after.kind, kind, "invariant: the edited file opens as another format");
    if before.unstable || after.unstable {
        return;
    }
    assert_eq!(
        before.packets.len(),
        after.packets.len(),
        "invariant: the edit changed the packet count ({kind:?})"
    );
    for (i, (a, b)) in before.packets.iter().zip(&after.packets).enumerate() {
        assert_eq!(a, b, "invariant: the edit changed packet {i} ({kind:?})");
    }
    assert_eq!(
        before.error, after.error,
        "invariant: the edit changed how the packets end ({kind:?})"
    );
}
