//! Damage and edges that a wider set of files shows (issue 21), through the
//! CLI: inputs built here from the corpus, `probe --json` compared with
//! ffprobe run on the same bytes (skipped, with a message, without ffprobe).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(p)
}

fn json(cmd: &mut Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// ADTS frames of the corpus file joined two by two into frames of two raw
/// data blocks (`number_of_raw_data_blocks_in_frame` = 1, no CRC).
fn two_block_adts() -> Vec<u8> {
    let d = std::fs::read(corpus("adts/aac_lc.aac")).unwrap();
    let mut frames = Vec::new();
    let mut i = 0;
    while i + 7 <= d.len() {
        let h = &d[i..i + 7];
        assert!(
            h[0] == 0xFF && h[1] & 0xF6 == 0xF0 && h[6] & 3 == 0,
            "a one-block ADTS frame without CRC"
        );
        let n = (usize::from(h[3] & 3) << 11) | (usize::from(h[4]) << 3) | usize::from(h[5] >> 5);
        frames.push(&d[i..i + n]);
        i += n;
    }
    let mut out = Vec::new();
    for pair in frames.chunks_exact(2) {
        let len = pair[0].len() + pair[1].len() - 7;
        let mut h = pair[0][..7].to_vec();
        h[3] = (h[3] & !3) | (len >> 11) as u8;
        h[4] = (len >> 3) as u8;
        h[5] = ((len & 7) << 5) as u8 | (h[5] & 0x1F);
        h[6] = (h[6] & !3) | 1;
        out.extend_from_slice(&h);
        out.extend_from_slice(&pair[0][7..]);
        out.extend_from_slice(&pair[1][7..]);
    }
    out
}

/// Stream `bit_rate` and `duration` of ADTS with two raw data blocks per
/// frame are ffprobe's (each frame's rate counts 2048 samples; before, we
/// counted 1024: double the bit rate, half the duration).
#[test]
fn adts_with_two_blocks_per_frame_has_ffprobes_rate_and_duration() {
    if Command::new("ffprobe").arg("-version").output().is_err() {
        println!("skipped: no ffprobe");
        return;
    }
    let dir = std::env::temp_dir().join(format!("mediaslice-edges-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("two_blocks.aac");
    std::fs::write(&file, two_block_adts()).unwrap();
    let ours = json(
        Command::new(env!("CARGO_BIN_EXE_mediaslice"))
            .args(["probe", "--json"])
            .arg(&file),
    );
    let theirs = json(
        Command::new("ffprobe")
            .args(["-v", "error", "-show_streams", "-show_format", "-of", "json"])
            .arg(&file),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    for key in ["bit_rate", "duration", "duration_ts"] {
        assert_eq!(ours["streams"][0][key], theirs["streams"][0][key], "stream {key}");
    }
    assert_eq!(ours["format"]["duration"], theirs["format"]["duration"]);
}
