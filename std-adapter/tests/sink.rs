//! The std sinks: a `FileSink` writes, patches and commits under its target's
//! name, and leaves no file there when dropped without a commit (also after
//! a failed remux); a `StreamSink` appends and cannot patch; a remux through
//! `Muxer` into a committed `FileSink` gives the bytes a `SliceSink` gets.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use crate::remux_common;

use mediaslice::{Demuxer, ErrorKind, MuxFormat, Muxer, Sink, SliceSink, SliceSource, TrackSpec};
use mediaslice_std::{FileSink, StdoutSink, StreamSink};
use remux_common::names_in;
use std::path::{Path, PathBuf};

/// A fresh, empty folder for one test.
fn folder(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mediaslice-sink-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn file_sink_writes_patches_and_commits_over_the_target() {
    let dir = folder("commit");
    let target = dir.join("out.bin");
    std::fs::write(&target, b"old contents").unwrap();
    let mut s = FileSink::create(&target).unwrap();
    assert_eq!(s.temp_path().parent(), Some(dir.as_path()));
    s.write_all(b"head").unwrap();
    s.write_vectored(&[b"[", b"", b"payload", b"]"]).unwrap();
    s.patch_at(0, b"HEAD").unwrap();
    s.write_all(b"tail").unwrap();
    assert_eq!(s.position(), 17);
    assert_eq!(s.patch_at(15, b"xyz").unwrap_err().kind(), ErrorKind::InvalidArgument);
    // The appends are combined in user space, the patch rewrites the
    // buffer: nothing reaches the file before the flush, then one write.
    assert_eq!(s.stats().writes, 0);
    s.flush().unwrap();
    let st = s.stats();
    assert_eq!((st.bytes_written, st.writes, st.patches, st.seeks), (17, 1, 1, 0));
    // Until the commit, the target is the old file, whole.
    assert_eq!(std::fs::read(&target).unwrap(), b"old contents");
    assert_eq!(std::fs::read(s.temp_path()).unwrap(), b"HEAD[payload]tail");
    s.commit().unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"HEAD[payload]tail");
    assert_eq!(names_in(&dir), ["out.bin"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn file_sink_dropped_without_commit_leaves_no_file() {
    let dir = folder("drop");
    let target = dir.join("out.bin");
    let mut s = FileSink::create(&target).unwrap();
    s.write_all(b"partial").unwrap();
    assert!(s.temp_path().exists());
    drop(s);
    assert!(names_in(&dir).is_empty(), "{:?}", names_in(&dir));
    // A target with no file name, and a folder that is not there.
    assert!(FileSink::create(Path::new("/")).is_err());
    assert!(FileSink::create(dir.join("missing/out.bin")).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes every track and packet of `bytes` through a `Muxer` into `sink`.
fn remux<K: Sink>(bytes: &[u8], sink: K) -> mediaslice::Result<K> {
    let mut demuxer = Demuxer::open(SliceSource::new(bytes), None)?;
    let mut muxer = Muxer::new(sink, MuxFormat::Dump)?;
    for i in 0..demuxer.tracks().len() {
        let track = demuxer.tracks()[i].clone();
        muxer.add_track(&TrackSpec::new(&track).with_config(demuxer.codec_config(i)?))?;
    }
    while let Some(p) = demuxer.next_packet()? {
        muxer.write_packet(&p)?;
    }
    muxer.finish()
}

#[test]
fn a_remux_commits_the_bytes_a_slice_gets_and_a_failed_one_leaves_nothing() {
    let bytes = std::fs::read(common::corpus_dir().join("files/mp4/h264_aac_faststart.mp4")).unwrap();
    let mut buf = vec![0u8; bytes.len() * 2];
    let want = remux(&bytes, SliceSink::new(&mut buf)).unwrap().into_written().to_vec();

    let dir = folder("remux");
    let target = dir.join("out.dump");
    let sink = remux(&bytes, FileSink::create(&target).unwrap()).unwrap();
    assert_eq!(sink.stats().patches, 1);
    sink.commit().unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), want);

    // Cut the input inside its media: the remux stops with the error, the
    // sink is dropped with it, and the earlier output stays as it was.
    let cut = &bytes[..bytes.len() / 2];
    let e = remux(cut, FileSink::create(&target).unwrap()).err().unwrap();
    assert!(e.is_truncation(), "{e}");
    assert_eq!(names_in(&dir), ["out.dump"]);
    assert_eq!(std::fs::read(&target).unwrap(), want);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stream_sink_appends_and_cannot_patch() {
    let mut s = StreamSink::new(Vec::new());
    s.write_vectored(&[b"ab", b"cd"]).unwrap();
    s.write_all(b"").unwrap();
    s.write_all(b"e").unwrap();
    s.flush().unwrap();
    assert_eq!(s.position(), 5);
    assert!(!s.can_patch());
    assert_eq!(s.patch_at(0, b"A").unwrap_err().kind(), ErrorKind::Unsupported);
    // Parts beyond one writev's worth are written in order.
    let parts: Vec<[u8; 1]> = (0..40u8).map(|i| [i]).collect();
    let refs: Vec<&[u8]> = parts.iter().map(|p| &p[..]).collect();
    s.write_vectored(&refs).unwrap();
    assert_eq!(s.position(), 45);
    let out = s.into_inner();
    assert_eq!(&out[..5], b"abcde");
    assert_eq!(out[5..], (0..40u8).collect::<Vec<_>>()[..]);

    let stdout = StdoutSink::stdout();
    assert!(!stdout.can_patch());
    assert_eq!(stdout.position(), 0);
}
