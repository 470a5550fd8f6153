//! The `mediaslice` command line, run as a process: ffprobe-shaped JSON, the
//! summary, the three sources agreeing, and the exit codes of docs/cli.md.

use mediaslice::crc::Crc32;
use mediaslice::{Demuxer, SliceSource};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mediaslice"))
}

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files").join(rel)
}

fn run(args: &[&str], file: &Path) -> Output {
    bin().args(args).arg(file).output().expect("the binary runs")
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("mediaslice-cli-{}-{name}", std::process::id()));
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

/// The expected JSON of a corpus file, for the packet count.
fn expected_packets(rel: &str) -> usize {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/expected")
        .join(format!("{rel}.json.gz"));
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    let v: Value = serde_json::from_str(&s).unwrap();
    v["packets"].as_array().unwrap().len()
}

#[test]
fn packets_json_has_ffprobes_shape() {
    let f = corpus("wav/pcm_s16le.wav");
    let o = run(&["packets", "--json"], &f);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    let packets = v["packets"].as_array().unwrap();
    assert_eq!(packets.len(), expected_packets("wav/pcm_s16le.wav"));
    let p = &packets[0];
    let keys: Vec<&str> = p.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "codec_type",
            "stream_index",
            "pts",
            "pts_time",
            "dts",
            "dts_time",
            "duration",
            "duration_time",
            "size",
            "pos",
            "flags",
            "data_hash"
        ]
    );
    assert_eq!(p["codec_type"], "audio");
    assert!(p["stream_index"].is_u64() && p["pts"].is_i64() && p["duration"].is_u64());
    assert!(p["size"].is_string() && p["pos"].is_string() && p["pts_time"].is_string());
    assert_eq!(p["flags"], "K_");
    let h = p["data_hash"].as_str().unwrap();
    assert!(h.starts_with("CRC32:") && h.len() == 14 && h[6..].chars().all(|c| c.is_ascii_hexdigit()));
    let s = &v["streams"][0];
    assert_eq!(s["index"], 0);
    assert_eq!(s["codec_name"], "pcm_s16le");
    assert_eq!(s["codec_type"], "audio");
    assert_eq!(s["codec_tag"], "0x0001");
    assert_eq!(s["codec_tag_string"], "[1][0][0][0]");
    assert!(s["sample_rate"].is_string() && s["channels"].is_u64());
    assert_eq!(v["format"]["format_name"], "wav");
    assert_eq!(v["format"]["nb_streams"], 1);
    assert_eq!(
        v["format"]["size"],
        std::fs::metadata(&f).unwrap().len().to_string().as_str()
    );
}

#[test]
fn mp4_streams_carry_fourcc_tags_and_languages() {
    let f = corpus("mp4/h264_aac.mp4");
    let v = json(&run(&["packets", "--json"], &f));
    assert_eq!(
        v["packets"].as_array().unwrap().len(),
        expected_packets("mp4/h264_aac.mp4")
    );
    let s = &v["streams"][0];
    assert_eq!(s["codec_name"], "h264");
    assert_eq!(s["codec_tag_string"], "avc1");
    assert_eq!(s["codec_tag"], "0x31637661");
    assert!(s["width"].is_u64());
    assert_eq!(v["format"]["format_name"], "mov,mp4,m4a,3gp,3g2,mj2");
}

/// The summary's CRC, computed here with the library.
fn library_summary(path: &Path) -> (u64, u64, u32) {
    let bytes = std::fs::read(path).unwrap();
    let mut d = Demuxer::open(SliceSource::new(&bytes), None).unwrap();
    let (mut n, mut b, mut crc) = (0, 0, Crc32::new());
    while let Some(p) = d.next_packet().unwrap() {
        n += 1;
        b += p.data.len() as u64;
        crc.update(p.data);
    }
    (n, b, crc.finish())
}

#[test]
fn summary_is_the_same_through_every_source() {
    for rel in ["wav/pcm_s24le.wav", "mp4/h264_bframes_aac.mp4", "wav/rf64.wav"] {
        let f = corpus(rel);
        let (n, b, crc) = library_summary(&f);
        for args in [
            &["packets", "--summary"][..],
            &["--source", "pread", "packets", "--summary"],
            &["--reader", "packets", "--summary"],
            &["packets", "--summary", "--source", "mmap"],
        ] {
            let o = run(args, &f);
            assert!(
                o.status.success(),
                "{rel} {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let v = json(&o);
            assert_eq!(v["packets"], n, "{rel} {args:?}");
            assert_eq!(v["bytes"], b, "{rel} {args:?}");
            assert_eq!(v["crc32"], format!("{crc:08x}"), "{rel} {args:?}");
        }
    }
}

#[test]
fn every_source_prints_the_same_packets() {
    let f = corpus("mp4/h264_aac_fragmented.mp4");
    let a = run(&["packets", "--json"], &f);
    let b = run(&["--reader", "packets", "--json"], &f);
    let c = run(&["--source", "pread", "packets", "--json"], &f);
    assert!(a.status.success() && b.status.success() && c.status.success());
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.stdout, c.stdout);
    // The table lists the same packets.
    let t = run(&["packets"], &f);
    let rows = String::from_utf8(t.stdout).unwrap().lines().count();
    assert_eq!(rows, json(&a)["packets"].as_array().unwrap().len() + 1);
}

#[test]
fn tags_json_by_scope() {
    let v = json(&run(&["tags", "--json"], &corpus("wav/info_tags.wav")));
    assert_eq!(v["format"]["tags"]["title"], "Mediaslice Title");
    assert_eq!(v["format"]["tags"]["artist"], "Mediaslice Artist");
    assert_eq!(v["streams"][0]["index"], 0);
    let o = run(&["tags"], &corpus("wav/bext.wav"));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("originator") && text.contains("format"), "{text}");
}

#[test]
fn probe_and_io() {
    let f = corpus("mp4/h264_aac_faststart.mp4");
    let v = json(&run(&["probe", "--json"], &f));
    assert_eq!(v["streams"].as_array().unwrap().len(), 2);
    assert!(v["format"]["duration"].is_string());
    let o = run(&["probe"], &f);
    assert!(String::from_utf8(o.stdout).unwrap().contains("h264"));

    let size = std::fs::metadata(&f).unwrap().len();
    let io = json(&run(&["io", "--json"], &f));
    let (bytes, reads) = (io["bytes_read"].as_u64().unwrap(), io["reads"].as_u64().unwrap());
    assert!(reads >= 1 && bytes >= 64, "{io}");
    // A probe of a faststart file reads its header, not its media.
    assert!(bytes < size, "probe read {bytes} of {size} bytes");
    let keys: Vec<&str> = io.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(keys, ["bytes_read", "reads"]);
}

#[test]
fn errors_are_one_line_and_exit_codes_are_documented() {
    let check = |o: &Output, code: i32, what: &str| {
        assert_eq!(
            o.status.code(),
            Some(code),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{what}: {err}");
        if code == 1 {
            assert_eq!(err.lines().count(), 1, "{what}: {err}");
            assert!(err.starts_with("mediaslice: "), "{what}: {err}");
        }
    };
    let missing = std::env::temp_dir().join("mediaslice-cli-no-such-file");
    check(&run(&["packets", "--json"], &missing), 1, "missing");
    let empty = temp("empty.wav", b"");
    check(&run(&["packets", "--json"], &empty), 1, "empty");
    check(&run(&["--reader", "probe"], &empty), 1, "empty, reader");
    check(&run(&["io"], &empty), 1, "empty, pread");
    let text = temp("text.mp4", b"this is not a media file at all, just words");
    check(&run(&["packets", "--json"], &text), 1, "text");
    check(&run(&["probe"], &std::env::temp_dir()), 1, "directory");
    check(&bin().args(["packets", "--frobnicate"]).output().unwrap(), 64, "usage");
    check(&bin().arg("--help").output().unwrap(), 0, "help");

    // Cut inside the media data of a file whose index comes first: the
    // packets before the cut are printed as valid JSON, then exit 2.
    let whole = std::fs::read(corpus("mp4/h264_aac_faststart.mp4")).unwrap();
    let cut = temp("cut.mp4", &whole[..whole.len() * 2 / 3]);
    let o = run(&["packets", "--json"], &cut);
    check(&o, 2, "truncated");
    let v = json(&o);
    let n = v["packets"].as_array().unwrap().len();
    assert!(n > 0 && n < expected_packets("mp4/h264_aac_faststart.mp4"));
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
    let o = run(&["packets", "--summary"], &cut);
    check(&o, 2, "truncated summary");
    for p in [empty, text, cut] {
        let _ = std::fs::remove_file(p);
    }
}

/// A PCM WAV file of `data_len` bytes of samples.
fn wav(data_len: u32) -> Vec<u8> {
    let mut f = Vec::with_capacity(44 + data_len as usize);
    f.extend_from_slice(b"RIFF");
    f.extend_from_slice(&(36 + data_len).to_le_bytes());
    f.extend_from_slice(b"WAVEfmt ");
    f.extend_from_slice(&16u32.to_le_bytes());
    f.extend_from_slice(&1u16.to_le_bytes()); // PCM
    f.extend_from_slice(&2u16.to_le_bytes()); // channels
    f.extend_from_slice(&48_000u32.to_le_bytes());
    f.extend_from_slice(&192_000u32.to_le_bytes());
    f.extend_from_slice(&4u16.to_le_bytes());
    f.extend_from_slice(&16u16.to_le_bytes());
    f.extend_from_slice(b"data");
    f.extend_from_slice(&data_len.to_le_bytes());
    f.extend((0..data_len).map(|i| (i % 251) as u8));
    f
}

#[test]
fn a_closed_pipe_is_not_a_crash() {
    // 4096 packets: the table is far larger than a pipe's buffer.
    let p = temp("pipe.wav", &wav(16 << 20));
    let mut child = bin()
        .arg("packets")
        .arg(&p)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut buf = [0u8; 64];
    let _ = out.read(&mut buf).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(p);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
}
