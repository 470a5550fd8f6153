//! `probe --json --programs` against ffprobe 5.1's `-show_programs` on the
//! corpus's two-program transport stream (corpus/files/programs), in every
//! source mode: each program's fields and tags, and its streams by index
//! (their objects are the `streams` entries, compared field by field
//! elsewhere); `format.nb_programs` too.

use serde_json::Value;

use crate::probe_oracle;
use probe_oracle::{expected, probe};

/// A program without its stream objects, and the indices of its streams.
fn shape(p: &Value) -> (Value, Vec<u64>) {
    let mut p = p.clone();
    let streams = p.as_object_mut().unwrap().remove("streams").unwrap();
    let idx = streams
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["index"].as_u64().unwrap())
        .collect();
    (p, idx)
}

#[test]
fn programs_match_ffprobe() {
    let rel = "programs/two_programs.ts";
    let want = expected(rel);
    let want_programs: Vec<_> = want["programs"].as_array().unwrap().iter().map(shape).collect();
    assert_eq!(want_programs.len(), 2, "the oracle has two programs");
    for source in ["mmap", "pread", "reader"] {
        let got = probe(&["--source", source, "probe", "--json", "--programs"], rel);
        let keys: Vec<&str> = got.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys[..3], ["programs", "streams", "format"], "ffprobe's section order");
        let got_programs: Vec<_> = got["programs"].as_array().unwrap().iter().map(shape).collect();
        assert_eq!(got_programs, want_programs, "{source}");
        // A program's streams are the `streams` entries.
        for p in got["programs"].as_array().unwrap() {
            for s in p["streams"].as_array().unwrap() {
                assert_eq!(s, &got["streams"][s["index"].as_u64().unwrap() as usize]);
            }
        }
        assert_eq!(got["format"]["nb_programs"], want["format"]["nb_programs"]);
    }
}

#[test]
fn no_programs_without_the_flag_or_outside_ts() {
    let got = probe(&["probe", "--json"], "programs/two_programs.ts");
    assert!(got.get("programs").is_none());
    assert_eq!(got["format"]["nb_programs"], 2);
    let got = probe(&["probe", "--json", "--programs"], "wav/pcm_s16le.wav");
    assert_eq!(got["programs"], Value::Array(Vec::new()));
    assert_eq!(got["format"]["nb_programs"], 0);
}

/// CRC-32/MPEG-2 of a PSI section (ISO/IEC 13818-1 Annex A).
fn crc32_mpeg2(data: &[u8]) -> u32 {
    mediaslice::crc::crc32_poly04c11db7(u32::MAX, data)
}

/// An SDT service: service_id, then a service descriptor with `names`
/// (provider, name) when given, after `extra` descriptors.
fn service(id: u16, names: Option<(&[u8], &[u8])>, extra: &[u8]) -> Vec<u8> {
    let mut d = extra.to_vec();
    if let Some((p, n)) = names {
        d.extend_from_slice(&[0x48, (3 + p.len() + n.len()) as u8, 1, p.len() as u8]);
        d.extend_from_slice(p);
        d.push(n.len() as u8);
        d.extend_from_slice(n);
    }
    [
        &id.to_be_bytes()[..],
        &[0xFC],
        &(0x8000 | d.len() as u16).to_be_bytes(),
        &d,
    ]
    .concat()
}

/// The corpus's two-program stream with every SDT packet's section
/// replaced by one listing `services`; with `pat_first`, its first two
/// packets (SDT, PAT) swapped.
fn with_sdt(services: &[Vec<u8>], pat_first: bool) -> Vec<u8> {
    let mut body = vec![0, 1, 0xC1, 0, 0, 0, 1, 0xFF];
    body.extend(services.concat());
    let mut sec = vec![0x42];
    sec.extend_from_slice(&(0xF000 | (body.len() as u16 + 4)).to_be_bytes());
    sec.extend(body);
    sec.extend_from_slice(&crc32_mpeg2(&sec).to_be_bytes());
    let mut ts = std::fs::read(probe_oracle::corpus("files/programs/two_programs.ts")).unwrap();
    for p in ts.chunks_exact_mut(188) {
        if u16::from_be_bytes([p[1], p[2]]) & 0x1FFF == 0x11 {
            assert!(
                p[1] & 0x40 != 0 && p[3] & 0x30 == 0x10,
                "an SDT packet with one section"
            );
            p[4] = 0;
            p[5..5 + sec.len()].copy_from_slice(&sec);
            p[5 + sec.len()..].fill(0xFF);
        }
    }
    if pat_first {
        let (a, b) = ts.split_at_mut(188);
        a.swap_with_slice(&mut b[..188]);
    }
    ts
}

/// Services of the SDT that the PAT does not list are programs too, as
/// ffmpeg's `sdt_cb` makes them (program_num, pmt_pid and pcr_pid 0, no
/// streams), in ffmpeg's order: the first table in the stream (here the
/// SDT, or the PAT when swapped) gives its programs first. A PAT program
/// the SDT leaves out has no tags; a service without a service descriptor
/// is no program. Compared with the ffprobe on PATH (without one it says
/// so and checks nothing), `format.nb_programs` too.
#[test]
fn sdt_only_services_match_ffprobe() {
    let (first, second) = (
        service(1, Some((b"FFmpeg", b"First")), &[]),
        service(2, Some((b"FFmpeg", b"Second")), &[]),
    );
    let ghost = service(99, Some((b"GP", b"Ghost")), &[]);
    let cases = [
        ("extra", vec![first.clone(), ghost.clone(), second.clone()], false, 3),
        ("missing", vec![second.clone()], false, 2),
        (
            "sdt_order",
            vec![ghost.clone(), second.clone(), first.clone()],
            false,
            3,
        ),
        ("pat_first", vec![ghost.clone(), second.clone(), first.clone()], true, 3),
        (
            "no_descriptor",
            vec![
                first.clone(),
                service(77, None, &[0x0A, 4, b'e', b'n', b'g', 0]),
                second.clone(),
            ],
            false,
            2,
        ),
        (
            "empty_names",
            vec![service(1, Some((b"", b"")), &[]), service(88, Some((b"", b"")), &[])],
            false,
            3,
        ),
    ];
    let dir = std::env::temp_dir().join(format!("mediaslice-sdt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, services, pat_first, count) in cases {
        let path = dir.join(format!("{name}.ts"));
        std::fs::write(&path, with_sdt(&services, pat_first)).unwrap();
        let Some(want) = ffprobe_programs(&path) else {
            eprintln!("sdt_only_services_match_ffprobe: ffprobe not available, not run");
            return;
        };
        let want_programs: Vec<_> = want["programs"].as_array().unwrap().iter().map(shape).collect();
        assert_eq!(want_programs.len(), count, "{name}: ffprobe's program count");
        for source in ["mmap", "pread", "reader"] {
            let got = run(&["--source", source, "probe", "--json", "--programs"], &path);
            let got_programs: Vec<_> = got["programs"].as_array().unwrap().iter().map(shape).collect();
            assert_eq!(got_programs, want_programs, "{name} ({source})");
            assert_eq!(got["format"]["nb_programs"], want["format"]["nb_programs"], "{name}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `-show_programs -show_format` of `path` by the ffprobe on PATH, or
/// `None` without one.
fn ffprobe_programs(path: &std::path::Path) -> Option<Value> {
    let o = std::process::Command::new("ffprobe")
        .args(["-v", "quiet", "-show_programs", "-show_format", "-of", "json"])
        .arg(path)
        .output()
        .ok()?;
    serde_json::from_slice(&o.stdout).ok()
}

/// `mediaslice ARGS path`, which must succeed, as JSON.
fn run(args: &[&str], path: &std::path::Path) -> Value {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `remux IN OUT.ts` names the service in its SDT after the input's
/// title (`h264_aac_tags.mp4`: "Mediaslice Test Title"), provider
/// "mediaslice" (docs/write-side.md, "MPEG-TS muxer"): `probe --json
/// --programs` of the output gives those tags, and so does ffprobe's
/// `-show_programs` when installed.
#[test]
fn a_remuxed_ts_names_its_service_after_the_title() {
    let dir = crate::remux_common::temp_dir("programs_sdt_title");
    let out = dir.join("tags.ts");
    let input = crate::common::corpus_dir().join("files/mp4/h264_aac_tags.mp4");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .arg("remux")
        .arg(&input)
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want = serde_json::json!({"service_name": "Mediaslice Test Title", "service_provider": "mediaslice"});
    let ours = run(&["probe", "--json", "--programs"], &out);
    assert_eq!(ours["programs"][0]["tags"], want, "our reader");
    match ffprobe_programs(&out) {
        Some(theirs) => assert_eq!(theirs["programs"][0]["tags"], want, "ffprobe"),
        None => println!("skip the ffprobe check: ffprobe is not installed"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
