//! `remux` with the MP4 sample index spilled to a temporary file
//! (`RemuxOptions::index_memory`, `TempSpill`): the same output as with
//! the index in memory, the spilled bytes reported, no file left beside
//! the output; a spill store that fails (a full disk) fails the remux and
//! leaves no file under the output's name.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use crate::common;
use crate::remux_common;

use mediaslice::{Demuxer, ErrorKind, MuxFormat, Muxer, Packet, SpillStore};
use mediaslice_std::remux::{remux_file, RemuxFormat, RemuxOptions};
use mediaslice_std::{FileSink, MmapSource};
use remux_common::{names_in, temp_dir};

fn corpus(name: &str) -> std::path::PathBuf {
    common::corpus_dir().join("files").join(name)
}

#[test]
fn a_spilled_remux_writes_the_same_file_and_leaves_nothing_beside_it() {
    let dir = temp_dir("index_spill_same");
    let mut spilled_any = 0;
    for input in ["mp4/h264_bframes_aac.mp4", "mp4/hevc_aac.mp4", "mpegts/h264_aac.ts"] {
        let input = corpus(input);
        if !input.exists() {
            println!("skip {}: absent", input.display());
            continue;
        }
        for format in [RemuxFormat::Mp4, RemuxFormat::HybridMp4] {
            let run = |memory: usize, name: &str| {
                let out = dir.join(name);
                let opts = RemuxOptions {
                    format: Some(format),
                    index_memory: memory,
                    ..Default::default()
                };
                let r = remux_file(&input, &out, &opts).unwrap();
                (std::fs::read(&out).unwrap(), r)
            };
            let (want, r0) = run(0, "a.mp4");
            let (got, r1) = run(64, "b.mp4");
            assert_eq!(r0.index_spilled, 0, "{}: the default bound holds it", input.display());
            assert!(r1.index_spilled >= 64 && r1.index_spilled % 64 == 0, "{r1:?}");
            assert!(got == want, "{} {format:?}: not the same bytes", input.display());
            assert_eq!(names_in(&dir), ["a.mp4", "b.mp4"], "nothing else left");
            spilled_any += 1;
        }
    }
    assert!(spilled_any >= 4);
}

/// A store that takes `room` bytes and then fails as a full disk does.
struct FullDisk {
    taken: Vec<u8>,
    room: usize,
}

impl SpillStore for FullDisk {
    fn append(&mut self, data: &[u8]) -> mediaslice::Result<()> {
        if self.taken.len() + data.len() > self.room {
            return Err(mediaslice::Error::new(
                ErrorKind::Io(embedded_io::ErrorKind::OutOfMemory),
                self.taken.len() as u64,
                &"test: no space left on the device",
            ));
        }
        self.taken.extend_from_slice(data);
        Ok(())
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> mediaslice::Result<()> {
        let at = pos as usize;
        buf.copy_from_slice(&self.taken[at..at + buf.len()]);
        Ok(())
    }
}

#[test]
fn a_full_spill_disk_fails_the_remux_and_leaves_no_output() {
    let dir = temp_dir("index_spill_full");
    let input = corpus("mpegts/h264_aac.ts");
    for format in [MuxFormat::Mp4, MuxFormat::HybridMp4(mediaslice::Fragmenting::DEFAULT)] {
        let out = dir.join("out.mp4");
        let run = || -> mediaslice::Result<FileSink> {
            let mut d = Demuxer::open(MmapSource::open(&input).unwrap(), Some("ts"))?;
            let sink = FileSink::create(&out).unwrap();
            let store = FullDisk {
                taken: Vec::new(),
                room: 256,
            };
            let mut m = Muxer::with_scratch(sink, format, vec![0u8; 1 << 20])?.with_index_spill(store, 128);
            let map = mediaslice::mux::copy::add_tracks(&mut d, &mut m)?;
            while let Some(p) = d.next_packet()? {
                if let Some(j) = map[p.track] {
                    m.write_packet(&Packet { track: j, ..p })?;
                }
            }
            m.finish()
        };
        let e = run().expect_err("the spill disk fills");
        assert!(matches!(e.kind(), ErrorKind::Io(_)), "{format:?}: {e}");
        assert!(!out.exists(), "{format:?}: a file under the output's name");
        assert!(names_in(&dir).is_empty(), "{format:?}: left {:?}", names_in(&dir));
    }
}
