//! DVB subtitles and teletext in MPEG-TS (issue 21), through the CLI:
//! transport streams made at test time by ffmpeg from the VobSub sample of
//! `../shared/samples` (bitmap subtitles converted to DVB subtitles; no
//! encoder writes them from text), then compared with ffprobe 5.1 packet by
//! packet (size and CRC-32) and on the stream's codec and language. The
//! teletext variant is the same stream with its PMT descriptor turned into
//! a teletext descriptor (ETSI EN 300 468 §6.2.43), CRC-32 recomputed.
//! Skipped, with a message, without ffmpeg/ffprobe or the samples.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn samples() -> PathBuf {
    std::env::var_os("MEDIASLICE_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/samples"))
}

fn json(cmd: &mut Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// MPEG-2 CRC-32 of a PSI section (ISO/IEC 13818-1 Annex A).
fn crc32_mpeg(data: &[u8]) -> u32 {
    let mut crc = u32::MAX;
    for &b in data {
        crc ^= (b as u32) << 24;
        for _ in 0..8 {
            crc = if crc & 0x8000_0000 != 0 {
                (crc << 1) ^ 0x04C1_1DB7
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The PMT's subtitling descriptor (tag 0x59, 8 bytes) turned into a
/// teletext descriptor (0x56, 5 bytes) and a private one in every PMT
/// packet; returns how many.
fn to_teletext(ts: &mut [u8]) -> usize {
    let mut n = 0;
    for p in ts.chunks_exact_mut(188) {
        let pid = (((p[1] & 0x1F) as u16) << 8) | p[2] as u16;
        if pid != 0x1000 || p[1] & 0x40 == 0 {
            continue;
        }
        let o = 5 + p[4] as usize;
        let len = ((((p[o + 1] & 0x0F) as usize) << 8) | p[o + 2] as usize) + 3;
        let sec = &mut p[o..o + len];
        let Some(j) = sec.windows(2).position(|w| w == [0x59, 0x08]) else {
            continue;
        };
        // A teletext descriptor of one 5-byte entry (language, type and
        // magazine, page), then a 1-byte private descriptor (tag 0x80) in
        // the 3 bytes left: the section keeps its length.
        sec[j] = 0x56;
        sec[j + 1] = 0x05;
        sec[j + 5] = 0x09;
        sec[j + 6] = 0x00;
        sec[j + 7..j + 10].copy_from_slice(&[0x80, 0x01, 0x00]);
        let crc = crc32_mpeg(&sec[..len - 4]);
        sec[len - 4..].copy_from_slice(&crc.to_be_bytes());
        n += 1;
    }
    n
}

fn subtitle_packets(v: &Value) -> Vec<(String, String)> {
    v["packets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["codec_type"] == "subtitle")
        .map(|p| (p["size"].to_string(), p["data_hash"].to_string()))
        .collect()
}

#[test]
fn dvb_subtitles_and_teletext_match_ffprobe() {
    let vobsub = samples().join("matroska/media__sample_with_vobsub.mkv");
    if !vobsub.is_file() {
        println!("skipped: no {} (set MEDIASLICE_SAMPLES)", vobsub.display());
        return;
    }
    if Command::new("ffmpeg").arg("-version").output().is_err()
        || Command::new("ffprobe").arg("-version").output().is_err()
    {
        println!("skipped: no ffmpeg/ffprobe");
        return;
    }
    let dir = std::env::temp_dir().join(format!("mediaslice-tssubs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dvb = dir.join("dvbsub.ts");
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-i"])
        .arg(&vobsub)
        .args(["-map", "0:v:0", "-map", "0:s:0", "-c:v", "copy", "-c:s", "dvb_subtitle"])
        .arg(&dvb)
        .status()
        .unwrap();
    assert!(st.success());
    let mut bytes = std::fs::read(&dvb).unwrap();
    assert!(to_teletext(&mut bytes) > 0, "no PMT with a subtitling descriptor");
    let ttx = dir.join("teletext.ts");
    std::fs::write(&ttx, &bytes).unwrap();
    for (file, codec) in [(&dvb, "dvb_subtitle"), (&ttx, "dvb_teletext")] {
        let ours = json(
            Command::new(env!("CARGO_BIN_EXE_mediaslice"))
                .args(["packets", "--json"])
                .arg(file),
        );
        let theirs = json(
            Command::new("ffprobe")
                .args([
                    "-v",
                    "error",
                    "-show_streams",
                    "-show_packets",
                    "-show_data_hash",
                    "CRC32",
                    "-of",
                    "json",
                ])
                .arg(file),
        );
        let sub = |v: &Value| {
            v["streams"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["codec_type"] == "subtitle")
                .cloned()
                .unwrap_or(Value::Null)
        };
        let (o, t) = (sub(&ours), sub(&theirs));
        assert_eq!(t["codec_name"], codec, "ffprobe's codec");
        assert_eq!(o["codec_name"], t["codec_name"], "{codec}: codec_name");
        assert_eq!(o["tags"]["language"], t["tags"]["language"], "{codec}: language");
        let (op, tp) = (subtitle_packets(&ours), subtitle_packets(&theirs));
        assert!(!tp.is_empty());
        assert_eq!(op, tp, "{codec}: packets (size, CRC-32)");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
