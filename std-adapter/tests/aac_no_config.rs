//! AAC without an AudioSpecificConfig: an ffmpeg fragmented MP4 made with
//! `-movflags empty_moov` from ADTS input writes its `esds` before the
//! first packet, so it has no DecoderSpecificInfo, and its samples are raw
//! AAC. `remux` to MP4 or Matroska and `package --hls` refuse that track
//! with a message saying why, rather than taking 7 bytes of raw AAC for an
//! ADTS header (which gave `mp4a.40.4`/`40.27` and a config ffmpeg decodes
//! as noise); `--streams` leaves it out. The file is made by ffmpeg here;
//! without ffmpeg the test says so and checks nothing.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::remux_common::temp_dir;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mediaslice"))
}

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The `esds` payload: its descriptors from the ES_Descriptor on.
fn esds(file: &[u8]) -> &[u8] {
    let at = file.windows(4).position(|w| w == b"esds").unwrap();
    let size = u32::from_be_bytes(file[at - 4..at].try_into().unwrap()) as usize;
    &file[at + 8..at - 4 + size]
}

/// Tag 0x05 (DecoderSpecificInfo, ISO/IEC 14496-1 7.2.6.7) anywhere among
/// the descriptors, walked by their sizes.
fn has_decoder_specific_info(mut d: &[u8]) -> bool {
    // ES_Descriptor (3): ES_ID, flags; DecoderConfigDescriptor (4): 13
    // fixed bytes, then its sub-descriptors.
    let mut skip = [3usize, 13];
    while let [tag, rest @ ..] = d {
        let (mut len, mut n) = (0usize, 0usize);
        for b in rest.iter().take(4) {
            len = len << 7 | usize::from(b & 0x7F);
            n += 1;
            if b & 0x80 == 0 {
                break;
            }
        }
        let body = &rest[n..];
        match tag {
            5 => return true,
            3 | 4 => {
                let k = if *tag == 3 { skip[0] } else { skip[1] };
                skip[0] = 3;
                d = &body[k.min(body.len())..];
            }
            _ => d = &body[len.min(body.len())..],
        }
    }
    false
}

#[test]
fn aac_without_audio_specific_config_is_refused() {
    if !have("ffmpeg") {
        println!("ffmpeg not installed: the input cannot be made, nothing is checked");
        return;
    }
    let dir = temp_dir("aac_no_config");
    let input = dir.join("empty_moov.mp4");
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(corpus("mpegts/h264_aac.ts"))
        .args([
            "-c",
            "copy",
            "-bsf:a",
            "aac_adtstoasc",
            "-movflags",
            "frag_keyframe+empty_moov",
            "-fflags",
            "+bitexact",
            "-y",
        ])
        .arg(&input)
        .status()
        .unwrap();
    assert!(st.success());
    let bytes = std::fs::read(&input).unwrap();
    // The input is what the report says: an esds without a config, and
    // samples that are not ADTS.
    assert!(!has_decoder_specific_info(esds(&bytes)));
    let regular = dir.join("regular.mp4");
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(corpus("mpegts/h264_aac.ts"))
        .args(["-c", "copy", "-fflags", "+bitexact", "-y"])
        .arg(&regular)
        .status()
        .unwrap();
    assert!(st.success());
    assert!(has_decoder_specific_info(esds(&std::fs::read(&regular).unwrap())));

    for out in ["out.mp4", "out.mkv"] {
        let o = bin().arg("remux").arg(&input).arg(dir.join(out)).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{out}: written: {err}");
        assert!(
            err.contains("stream 1: AAC without an AudioSpecificConfig"),
            "{out}: {err}"
        );
        assert!(!dir.join(out).exists(), "{out}: a refused remux leaves no output");
    }
    let o = bin()
        .arg("package")
        .arg(&input)
        .arg(dir.join("hls"))
        .arg("--hls")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "packaged: {err}");
    assert!(err.contains("AudioSpecificConfig"), "{err}");
    // The video alone is written.
    let o = bin()
        .arg("remux")
        .arg(&input)
        .arg(dir.join("video.mp4"))
        .args(["--streams", "0"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The same stream with its config (ffmpeg's regular MP4, and the TS it
    // came from) gives AAC LC.
    for src in [regular, corpus("mpegts/h264_aac.ts")] {
        let hls = dir.join("hls_ok");
        let _ = std::fs::remove_dir_all(&hls);
        let o = bin().arg("package").arg(&src).arg(&hls).arg("--hls").output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let master = std::fs::read_to_string(hls.join("master.m3u8")).unwrap();
        assert!(master.contains("mp4a.40.2\""), "{}: {master}", src.display());
    }
}
