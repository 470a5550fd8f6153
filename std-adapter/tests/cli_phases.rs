//! The hidden `mediaslice phases FILE` command (benches/scripts/memory.sh):
//! one JSON object with the four phases, the same packets as `packets
//! --summary`, and no allocation in the packet loop of a contiguous format.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)
}

fn run(args: &[&str], file: &Path) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn phases_reports_each_phase_and_the_same_packets() {
    for (rel, contiguous) in [
        ("wav/pcm_s16le.wav", true),
        ("mp4/h264_aac.mp4", true),
        ("mpegts/h264_aac.ts", false),
    ] {
        let f = corpus(rel);
        let v = run(&["phases"], &f);
        let s = run(&["packets", "--summary"], &f);
        assert_eq!(v["packets"], s["packets"], "{rel}");
        assert_eq!(v["crc32"], s["crc32"], "{rel}");
        let phases = v["phases"].as_array().unwrap();
        let names: Vec<&str> = phases.iter().map(|p| p["phase"].as_str().unwrap()).collect();
        assert_eq!(names, ["open", "tracks", "packets", "seek"], "{rel}");
        for p in phases {
            assert!(p["vm_hwm_kib"].as_u64().unwrap() > 0, "{rel}: {p}");
            assert!(
                p["heap_peak"].as_u64().unwrap() >= p["heap_now"].as_u64().unwrap(),
                "{rel}: {p}"
            );
        }
        let packets = &phases[2];
        assert!(
            packets["bytes_read"].as_u64().unwrap() >= s["bytes"].as_u64().unwrap(),
            "{rel}"
        );
        if contiguous {
            // Packets borrow the map: the pull loop allocates nothing.
            assert_eq!(packets["allocs"], 0, "{rel}: {packets}");
        }
        assert!(v["packets_after_seek"].as_u64().unwrap() > 0, "{rel}");
    }
}
