//! The `tagedit_roundtrip` fuzz target's findings of issue 20, each rebuilt
//! from a corpus file with valid checksums (the fuzzed inputs have bad
//! Ogg CRCs and run in `fuzz/regressions/tagedit_roundtrip/`): an edit
//! either gives a file that opens as the same format with the same
//! packets, or is refused with the input untouched (docs/tags.md).

use crate::tagedit_common;

use mediaslice::crc::crc32_poly04c11db7;
use std::path::{Path, PathBuf};
use tagedit_common::*;

/// Our reader's packets of `path`, or `None` when it does not open.
fn keys(path: &Path) -> Option<Vec<PacketKey>> {
    packets(path).map(|(k, _)| k)
}

/// Recomputes the CRC of the Ogg page at `at` (RFC 3533 §6).
fn ogg_crc(b: &mut [u8], at: usize) {
    let len = 27 + b[at + 26] as usize;
    let len = len + b[at + 27..at + len].iter().map(|&l| l as usize).sum::<usize>();
    b[at + 22..at + 26].fill(0);
    let crc = crc32_poly04c11db7(0, &b[at..at + len]);
    b[at + 22..at + 26].copy_from_slice(&crc.to_le_bytes());
}

/// The second page of an Ogg file.
fn second_page(b: &[u8]) -> usize {
    27 + b[26] as usize + b[27..27 + b[26] as usize].iter().map(|&l| l as usize).sum::<usize>()
}

/// `ogg-packet-count-changes.ogg` and `-2.ogg`: the comment header's page
/// flagged as continuing a packet though the identification page ends its
/// packet. Readers (ours, ffmpeg) drop the comment as the rest of a packet
/// whose start they missed; the editor laid the comment into pages of its
/// own, unflagged, so the edited file read one more packet. Refused now.
#[test]
fn ogg_comment_page_flagged_continued_is_refused() {
    let dir = scratch("fuzz-finds-ogg");
    for name in ["opus.opus", "vorbis.ogg"] {
        let mut b = std::fs::read(corpus(&format!("ogg/{name}"))).unwrap();
        let at = second_page(&b);
        assert_eq!(&b[at..at + 4], b"OggS");
        b[at + 5] |= 0x01;
        ogg_crc(&mut b, at);
        let input = dir.join(name);
        std::fs::write(&input, &b).unwrap();
        let before = keys(&input);
        let out = dir.join(format!("out-{name}"));
        match mediaslice_std::tagedit::edit(&input, &edits(), Some(&out)) {
            Ok(_) => panic!(
                "{name}: edited; packets before {:?}, after {:?}",
                before.map(|k| k.len()),
                keys(&out).map(|k| k.len())
            ),
            Err(e) => eprintln!("{name}: {e}"),
        }
        assert_refused(&input, Some(&out));
    }
}

/// The finding `name` of `fuzz/regressions/tagedit_roundtrip/` copied
/// into a scratch folder, and the path of an output beside it.
fn find(name: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let input = dir.join(name);
    let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/tagedit_roundtrip");
    std::fs::copy(kept.join(name), &input).unwrap();
    (input, dir.join(format!("out-{name}")))
}

/// `mp3-xing-frame-and-junk-no-longer-opens-after-an-id3v2-tag.mp3`: a
/// Xing frame whose length reaches past the ID3v1 tag, and no frame after
/// it but one our reader found in the tag's year and comment. It opened
/// only while the tag held those bytes; the edit (an ID3v2 tag in front,
/// the ID3v1 tag rewritten) made it refuse. The first frame is now looked
/// for before the trailing tags only: neither opens (ffprobe 5.1 opens
/// neither either: "End of file").
#[test]
fn mp3_frame_only_in_the_id3v1_tag_opens_neither_before_nor_after_an_edit() {
    let (input, out) = find("mp3-xing-frame-and-junk-no-longer-opens-after-an-id3v2-tag.mp3");
    mediaslice_std::tagedit::edit(&input, &edits(), Some(&out)).unwrap();
    let (before, after) = (keys(&input), keys(&out));
    assert_eq!(
        before.is_some(),
        after.is_some(),
        "opens before: {before:?}, after the edit: {after:?}"
    );
    assert!(before.is_none(), "a frame found in the ID3v1 tag: {before:?}");
}

/// `mkv-cut-last-block-reads-into-the-new-tags.mkv`: the last Cluster ends
/// with the file, but its last BlockGroup claims 2 bytes more. A copy
/// that appended Tags after the Cluster let that BlockGroup read into
/// them and look whole. A Cluster the edit puts bytes after must hold its
/// children whole; this one is refused, in place and by a copy.
#[test]
fn mkv_cluster_whose_last_child_is_cut_is_refused() {
    let (input, out) = find("mkv-cut-last-block-reads-into-the-new-tags.mkv");
    if let Ok(r) = mediaslice_std::tagedit::edit(&input, &edits(), Some(&out)) {
        panic!(
            "edited ({:?}): packets before {:?}, after {:?}",
            r.mode,
            keys(&input),
            keys(&out)
        );
    }
    assert_refused(&input, Some(&out));
    assert_refused(&input, None);
}
